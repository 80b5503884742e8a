package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// An event's data is the server's wall clock when it sent it, in nanoseconds: client and server
// share the host's clock, so now minus it is the event's delivery latency.
const dataPrefix = "data: "

func runSSE(args []string) {
	fs := flag.NewFlagSet("sse", flag.ExitOnError)
	target := fs.String("url", "", "the event stream; its query (n=, rate=) is set from -event-rate, -duration and -timeout")
	clients := fs.Int("connections", 100, "clients, each reading one stream")
	eventRate := fs.Float64("event-rate", 10, "events per second the server sends each client (the offered rate)")
	duration := fs.Duration("duration", 2*time.Second, "the measured window, from when every client has its stream")
	timeout := fs.Duration("timeout", 5*time.Second, "per connect and per stream's headers")
	out := fs.String("out", "", "the JSON result")
	dialers := fs.Int("dialers", 256, "connections opened at once")
	pids := fs.String("pids", "", "the server's root processes, for its memory (comma-separated)")
	_ = fs.Parse(args)
	u, err := url.Parse(*target)
	if err != nil || u.Host == "" || *out == "" || *clients < 1 || *eventRate <= 0 {
		fmt.Fprintln(os.Stderr, "shapes sse: give -url, -out, -connections >= 1 and -event-rate > 0")
		os.Exit(2)
	}
	// Each stream outlasts the window: the clients may take up to -timeout to get theirs.
	q := u.Query()
	q.Set("n", strconv.Itoa(int(math.Ceil(*eventRate*(duration.Seconds()+timeout.Seconds()+5)))))
	q.Set("rate", strconv.FormatFloat(*eventRate, 'g', -1, 64))
	u.RawQuery = q.Encode()
	offered := float64(*clients) * *eventRate
	res := result{Tool: "shapes sse", Rate: &offered, Nofile: raiseNofile(uint64(*clients + 64))}
	var errs errorKinds
	var wrong, events, bytes, closed atomic.Int64
	var windowStart, windowEnd atomic.Int64 // unix ns; 0 until the window opens
	var stopping atomic.Bool
	server := watchServer(*pids)
	var ready, done sync.WaitGroup
	streams := make([]net.Conn, *clients)
	samples := make([][]float64, *clients)
	sem := make(chan struct{}, max(1, *dialers))
	opened := time.Now()
	for i := 0; i < *clients; i++ {
		ready.Add(1)
		done.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer done.Done()
			r, c := openStream(u, *timeout, &errs, &wrong)
			<-sem
			ready.Done()
			if r == nil {
				return
			}
			streams[i] = c
			n, b, lat := readEvents(r, &windowStart, &windowEnd)
			events.Add(n)
			bytes.Add(b)
			samples[i] = lat
			if !stopping.Load() {
				closed.Add(1) // the stream ended before the window did
			}
		}(i)
	}
	ready.Wait()
	server.held()
	start := time.Now()
	windowStart.Store(start.UnixNano())
	windowEnd.Store(start.Add(*duration).UnixNano())
	time.Sleep(*duration)
	res.Memory = server.end()
	stopping.Store(true)
	held := int64(0)
	for _, c := range streams {
		if c != nil {
			held++
			c.Close()
		}
	}
	done.Wait()
	var all []float64
	for _, s := range samples {
		all = append(all, s...)
	}
	res.Connections = connections{Asked: *clients, Refused: int64(*clients) - held, Closed: closed.Load(),
		Held: held - closed.Load(), OpenS: seconds(start.Sub(opened))}
	res.DurationS, res.Requests, res.BytesRead, res.LatencyMs = seconds(*duration), events.Load(), bytes.Load(), summarize(all)
	res.Errors, res.Wrong = errs.counts(), wrong.Load()
	writeResult(*out, res)
}

// openStream connects and reads the stream's headers; nil when the server refused, failed or
// answered anything but a 200 event stream.
func openStream(u *url.URL, timeout time.Duration, errs *errorKinds, wrong *atomic.Int64) (*bufio.Reader, net.Conn) {
	c, err := net.DialTimeout("tcp", u.Host, timeout)
	if err != nil {
		errs.connect.Add(1)
		return nil, nil
	}
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write(getRequest(u)); err != nil {
		errs.add(err, true)
		c.Close()
		return nil, nil
	}
	reader := bufio.NewReader(c)
	resp, err := http.ReadResponse(reader, nil)
	if err != nil {
		errs.add(err, false)
		c.Close()
		return nil, nil
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		wrong.Add(1)
		c.Close()
		return nil, nil
	}
	_ = c.SetDeadline(time.Time{})
	return bufio.NewReader(resp.Body), c // resp.Body undoes a chunked framing
}

// readEvents reads until the stream ends or is closed, counting the events that arrive inside
// the window, each with its delivery latency in milliseconds.
func readEvents(r *bufio.Reader, windowStart, windowEnd *atomic.Int64) (int64, int64, []float64) {
	var events, bytes int64
	var lat []float64
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return events, bytes, lat
		}
		now := time.Now().UnixNano()
		from, to := windowStart.Load(), windowEnd.Load()
		if from == 0 || now < from || now >= to {
			continue
		}
		bytes += int64(len(line))
		if !strings.HasPrefix(line, dataPrefix) {
			continue
		}
		sent, err := strconv.ParseInt(strings.TrimSpace(line[len(dataPrefix):]), 10, 64)
		if err != nil {
			continue
		}
		events++
		lat = append(lat, float64(now-sent)/1e6)
	}
}
