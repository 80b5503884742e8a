package main

import (
	"bytes"
	"flag"
	"fmt"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

func runWSEcho(args []string) {
	fs := flag.NewFlagSet("wsecho", flag.ExitOnError)
	target := fs.String("url", "", "the echo endpoint (ws://H:P/ws)")
	n := fs.Int("connections", 100, "WebSocket connections, each echoing one message at a time")
	size := fs.Int("size", 32, "bytes per message (text)")
	duration := fs.Duration("duration", 2*time.Second, "the measured window, from when every connection is open")
	timeout := fs.Duration("timeout", 5*time.Second, "per handshake and per echo")
	out := fs.String("out", "", "the JSON result")
	dialers := fs.Int("dialers", 256, "connections opened at once")
	pids := fs.String("pids", "", "the server's root processes, for its memory (comma-separated)")
	_ = fs.Parse(args)
	u, err := url.Parse(*target)
	if err != nil || u.Host == "" || *out == "" || *n < 1 || *size < 1 {
		fmt.Fprintln(os.Stderr, "shapes wsecho: give -url, -out, -connections >= 1 and -size >= 1")
		os.Exit(2)
	}
	if u.Scheme == "http" { // the harness names every server by its HTTP URL
		u.Scheme = "ws"
	}
	res := result{Tool: "shapes wsecho", Nofile: raiseNofile(uint64(*n + 64))}
	var errs errorKinds
	var wrong atomic.Int64
	server := watchServer(*pids)
	opened := time.Now()
	conns := dialAll(u.String(), *n, *dialers, *timeout, &errs)
	server.held()
	start := time.Now()
	end := start.Add(*duration)
	var messages, received, closed atomic.Int64
	var stopping atomic.Bool
	samples := make([][]float64, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func(i int, c *websocket.Conn) {
			defer wg.Done()
			payload := bytes.Repeat([]byte{'x'}, *size)
			for time.Now().Before(end) {
				copy(payload, fmt.Sprintf("%d ", i)) // a connection's own messages, told apart
				sent := time.Now()
				_ = c.SetWriteDeadline(sent.Add(*timeout))
				if err := c.WriteMessage(websocket.TextMessage, payload); err != nil {
					if !stopping.Load() {
						errs.add(err, true)
						closed.Add(1)
					}
					return
				}
				_ = c.SetReadDeadline(sent.Add(*timeout))
				_, echo, err := c.ReadMessage()
				if err != nil {
					if !stopping.Load() {
						errs.add(err, false)
						closed.Add(1)
					}
					return
				}
				if time.Now().After(end) {
					return // answered after the window: not counted, as wrk drops them
				}
				if !bytes.Equal(echo, payload) {
					wrong.Add(1)
				}
				messages.Add(1)
				received.Add(int64(len(echo)))
				samples[i] = append(samples[i], millis(time.Since(sent)))
			}
		}(i, c)
	}
	time.Sleep(time.Until(end))
	res.Memory = server.end()
	stopping.Store(true)
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now()) // a read still waiting ends now
	}
	wg.Wait()
	for _, c := range conns {
		c.Close()
	}
	var all []float64
	for _, s := range samples {
		all = append(all, s...)
	}
	res.Connections = connections{Asked: *n, Refused: int64(*n - len(conns)), Closed: closed.Load(),
		Held: int64(len(conns)) - closed.Load(), OpenS: seconds(start.Sub(opened))}
	res.DurationS, res.Requests, res.BytesRead, res.LatencyMs = seconds(*duration), messages.Load(), received.Load(), summarize(all)
	res.Errors, res.Wrong = errs.counts(), wrong.Load()
	writeResult(*out, res)
}

// dialAll opens n WebSocket connections, `dialers` at a time; the ones that failed are left out.
func dialAll(target string, n, dialers int, timeout time.Duration, errs *errorKinds) []*websocket.Conn {
	dialer := websocket.Dialer{HandshakeTimeout: timeout}
	conns := make([]*websocket.Conn, n)
	sem := make(chan struct{}, max(1, dialers))
	var wg sync.WaitGroup
	for i := range conns {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			c, _, err := dialer.Dial(target, nil)
			if err != nil {
				errs.connect.Add(1)
				return
			}
			conns[i] = c
		}(i)
	}
	wg.Wait()
	open := make([]*websocket.Conn, 0, n)
	for _, c := range conns {
		if c != nil {
			open = append(open, c)
		}
	}
	return open
}
