package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// errorKinds counts failures as wrk does: connect, read, write, timeout.
type errorKinds struct{ connect, read, write, timeout atomic.Int64 }

func (e *errorKinds) add(err error, writing bool) {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		e.timeout.Add(1)
	case writing:
		e.write.Add(1)
	default:
		e.read.Add(1)
	}
}

func (e *errorKinds) counts() errorCounts {
	return errorCounts{e.connect.Load(), e.read.Load(), e.write.Load(), e.timeout.Load()}
}

// httpConn is one kept-alive HTTP/1.1 connection sending the same GET again and again.
type httpConn struct {
	conn   net.Conn
	reader *bufio.Reader
}

func dialHTTP(host string, timeout time.Duration) (*httpConn, error) {
	c, err := net.DialTimeout("tcp", host, timeout)
	if err != nil {
		return nil, err
	}
	return &httpConn{c, bufio.NewReader(c)}, nil
}

// roundTrip sends request and reads one answer; it returns the status, the bytes of the body,
// and whether the write (rather than the read) failed.
func (h *httpConn) roundTrip(request []byte, timeout time.Duration) (int, int64, bool, error) {
	_ = h.conn.SetDeadline(time.Now().Add(timeout))
	if _, err := h.conn.Write(request); err != nil {
		return 0, 0, true, err
	}
	resp, err := http.ReadResponse(h.reader, nil)
	if err != nil {
		return 0, 0, false, err
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	_ = h.conn.SetDeadline(time.Time{})
	if err == nil && resp.Close {
		err = io.EOF // the server said it closes: this connection is no longer kept alive
	}
	return resp.StatusCode, n, false, err
}

func getRequest(target *url.URL) []byte {
	return []byte(fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: pwb-shapes\r\n\r\n", target.RequestURI(), target.Host))
}

func runIdle(args []string) {
	fs := flag.NewFlagSet("idle", flag.ExitOnError)
	target := fs.String("url", "", "the page each connection asks once, and the active load asks at -rate")
	idle := fs.Int("connections", 100, "idle keep-alive connections to hold open")
	active := fs.Int("active", 4, "connections carrying the fixed-rate load")
	rate := fs.Float64("rate", 200, "the active load's requests per second, open loop")
	duration := fs.Duration("duration", 2*time.Second, "how long the idle connections are held under the active load")
	timeout := fs.Duration("timeout", 5*time.Second, "per connect and per answer")
	out := fs.String("out", "", "the JSON result")
	pids := fs.String("pids", "", "the server's root processes, for its memory (comma-separated)")
	dialers := fs.Int("dialers", 256, "connections opened at once")
	_ = fs.Parse(args)
	u, err := url.Parse(*target)
	if err != nil || u.Host == "" || *out == "" || *idle < 0 || *active < 1 || *rate <= 0 {
		fmt.Fprintln(os.Stderr, "shapes idle: give -url, -out, -connections >= 0, -active >= 1 and -rate > 0")
		os.Exit(2)
	}
	request := getRequest(u)
	res := result{Tool: "shapes idle", Rate: rate}
	res.Nofile = raiseNofile(uint64(*idle + *active + 64))
	server := watchServer(*pids)
	var errs errorKinds
	var wrong atomic.Int64
	held, refused, closed, opened := openIdle(u, request, *idle, *dialers, *timeout, &errs, &wrong)
	res.Connections = connections{Asked: *idle, Refused: refused, OpenS: seconds(opened)}
	server.held()
	requests, bytes, lat, window := activeLoad(u, request, *active, *rate, *duration, *timeout, &errs, &wrong)
	res.Memory = server.end()
	dropped := closed.stop()
	res.Connections.Closed = dropped
	res.Connections.Held = int64(len(held)) - dropped
	for _, c := range held {
		c.conn.Close()
	}
	res.DurationS, res.Requests, res.BytesRead, res.LatencyMs = seconds(window), requests, bytes, summarize(lat)
	res.Errors, res.Wrong = errs.counts(), wrong.Load()
	writeResult(*out, res)
}

// watcher counts the idle connections the server closes while they are held.
type watcher struct {
	closed   atomic.Int64
	stopping atomic.Bool
}

func (w *watcher) watch(c *httpConn) {
	buf := make([]byte, 1)
	_, _ = c.reader.Read(buf) // an idle connection hears nothing until it is closed
	if !w.stopping.Load() {
		w.closed.Add(1)
	}
}

func (w *watcher) stop() int64 {
	w.stopping.Store(true)
	return w.closed.Load()
}

// openIdle opens n connections, -dialers at a time, each asking once and reading its answer;
// the ones the server refused or answered with a close are not held.
func openIdle(u *url.URL, request []byte, n, dialers int, timeout time.Duration, errs *errorKinds,
	wrong *atomic.Int64) ([]*httpConn, int64, *watcher, time.Duration) {
	started := time.Now()
	conns := make([]*httpConn, n)
	var refused atomic.Int64
	sem := make(chan struct{}, max(1, dialers))
	var wg sync.WaitGroup
	for i := range conns {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := dialHTTP(u.Host, timeout)
			if err != nil {
				errs.connect.Add(1)
				refused.Add(1)
				return
			}
			status, _, writing, err := c.roundTrip(request, timeout)
			if status != 0 && (status < 200 || status > 299) {
				wrong.Add(1)
			}
			if err != nil {
				if err != io.EOF {
					errs.add(err, writing)
				}
				refused.Add(1)
				c.conn.Close()
				return
			}
			conns[i] = c
		}(i)
	}
	wg.Wait()
	w := &watcher{}
	held := make([]*httpConn, 0, n)
	for _, c := range conns {
		if c != nil {
			held = append(held, c)
			go w.watch(c)
		}
	}
	return held, refused.Load(), w, time.Since(started)
}

// activeLoad sends rate requests per second over `active` connections, each on its own schedule
// (open loop), for duration; latency is timed from each request's intended send time, so a
// stalled server shows as the wait every scheduled request had.
func activeLoad(u *url.URL, request []byte, active int, rate float64, duration, timeout time.Duration,
	errs *errorKinds, wrong *atomic.Int64) (int64, int64, []float64, time.Duration) {
	interval := time.Duration(float64(active) / rate * float64(time.Second))
	start := time.Now()
	end := start.Add(duration)
	var requests, bytes atomic.Int64
	samples := make([][]float64, active)
	var wg sync.WaitGroup
	for i := 0; i < active; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var c *httpConn
			for k := 0; ; k++ {
				intended := start.Add(time.Duration(float64(i)/rate*float64(time.Second)) + time.Duration(k)*interval)
				if !intended.Before(end) {
					break
				}
				time.Sleep(time.Until(intended))
				if c == nil {
					var err error
					if c, err = dialHTTP(u.Host, timeout); err != nil {
						errs.connect.Add(1)
						c = nil
						continue
					}
				}
				status, n, writing, err := c.roundTrip(request, timeout)
				if status != 0 {
					requests.Add(1)
					bytes.Add(n)
					samples[i] = append(samples[i], millis(time.Since(intended)))
					if status < 200 || status > 299 {
						wrong.Add(1)
					}
				}
				if err != nil {
					if err != io.EOF {
						errs.add(err, writing)
					}
					c.conn.Close()
					c = nil
				}
			}
			if c != nil {
				c.conn.Close()
			}
		}(i)
	}
	wg.Wait()
	var all []float64
	for _, s := range samples {
		all = append(all, s...)
	}
	return requests.Load(), bytes.Load(), all, time.Since(start)
}
