// Command shapes drives and serves the connection-shape workloads (pywebbench issue 50) that no
// HTTP generator sends: many idle keep-alive connections beside a fixed-rate load (idle),
// server-sent events to many clients (sse), WebSocket echo (wsecho); and a server that costs
// nothing (serve), against which each driver's own ceiling is measured.
//
//	shapes idle   -url http://H:P/hello -idle N -active A -rate R -duration D -out F.json [-pids P,Q]
//	shapes sse    -url 'http://H:P/sse?n=E&rate=R' -clients N -event-rate R -duration D -out F.json
//	shapes wsecho -url ws://H:P/ws -connections N -size S -duration D -out F.json
//	shapes serve  -host H -port P
//
// Each driver first opens its connections (not timed), then measures for -duration, then writes
// one JSON result (loadgen/shapes.py reads it): completed units (active requests, events,
// messages), errors by kind, the latency spectrum, the connections asked, held, refused and
// closed by the server, the file limit it ran with and, given -pids, the server's memory.
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"syscall"
	"time"
)

// spectrum is the percentiles wrk_report.lua and loadgen/oha.py report, so every generator's
// latency lines up point for point (0 is the minimum, 100 the maximum).
var spectrum = []float64{0, 1, 5, 10, 20, 25, 30, 40, 50, 60, 70, 75, 80, 85, 90, 95, 97.5,
	99, 99.5, 99.9, 99.95, 99.99, 100}

type errorCounts struct {
	Connect int64 `json:"connect"`
	Read    int64 `json:"read"`
	Write   int64 `json:"write"`
	Timeout int64 `json:"timeout"`
}

type latency struct {
	Mean        float64      `json:"mean"`
	Stdev       float64      `json:"stdev"`
	Max         float64      `json:"max"`
	Percentiles [][2]float64 `json:"percentiles"`
}

type connections struct {
	Asked   int     `json:"asked"`
	Held    int64   `json:"held"`
	Refused int64   `json:"refused"`
	Closed  int64   `json:"closed"`
	OpenS   float64 `json:"open_s"`
}

type result struct {
	Tool        string       `json:"tool"`
	DurationS   float64      `json:"duration_s"`
	Requests    int64        `json:"requests"`
	Errors      errorCounts  `json:"errors"`
	Wrong       int64        `json:"wrong"`
	LatencyMs   latency      `json:"latency_ms"`
	BytesRead   int64        `json:"bytes_read"`
	Rate        *float64     `json:"rate"`
	Nofile      uint64       `json:"nofile"`
	Connections connections  `json:"connections"`
	Memory      *memoryUsage `json:"memory"`
}

// summarize turns latencies (milliseconds, any order) into the spectrum.
func summarize(ms []float64) latency {
	out := latency{Percentiles: [][2]float64{}}
	if len(ms) == 0 {
		return out
	}
	sort.Float64s(ms)
	sum := 0.0
	for _, v := range ms {
		sum += v
	}
	out.Mean = sum / float64(len(ms))
	sq := 0.0
	for _, v := range ms {
		sq += (v - out.Mean) * (v - out.Mean)
	}
	out.Stdev = math.Sqrt(sq / float64(len(ms)))
	out.Max = ms[len(ms)-1]
	for _, p := range spectrum {
		i := int(math.Ceil(p/100*float64(len(ms)))) - 1
		if i < 0 {
			i = 0
		}
		out.Percentiles = append(out.Percentiles, [2]float64{p, ms[i]})
	}
	return out
}

// raiseNofile lifts RLIMIT_NOFILE to at least want (the hard limit too, where we may), so N
// connections fit; it returns the soft limit it ran with.
func raiseNofile(want uint64) uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	if lim.Cur >= want {
		return lim.Cur
	}
	next := syscall.Rlimit{Cur: want, Max: lim.Max}
	if want > lim.Max {
		next.Max = want // root only; otherwise fall back to the hard limit below
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &next); err != nil {
		next = syscall.Rlimit{Cur: lim.Max, Max: lim.Max}
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &next)
	}
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	return lim.Cur
}

func writeResult(path string, r result) {
	data, err := json.MarshalIndent(r, "", " ")
	if err == nil {
		err = os.WriteFile(path, append(data, '\n'), 0o644)
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "shapes:", err)
	os.Exit(1)
}

func seconds(d time.Duration) float64 { return d.Seconds() }

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: shapes idle|sse|wsecho|serve [flags]")
		os.Exit(2)
	}
	args := os.Args[2:]
	switch os.Args[1] {
	case "idle":
		runIdle(args)
	case "sse":
		runSSE(args)
	case "wsecho":
		runWSEcho(args)
	case "serve":
		runServe(args)
	case "version", "-version", "--version":
		fmt.Println("pwb-shapes", runtimeVersion())
	default:
		fmt.Fprintf(os.Stderr, "shapes: unknown command %q (idle, sse, wsecho, serve)\n", os.Args[1])
		os.Exit(2)
	}
}
