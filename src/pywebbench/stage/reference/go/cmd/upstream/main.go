// Command upstream is the benchmark's "slow upstream API": every GET (any path) waits
// -delay, or ?delay_ms= for that request, then answers a fixed JSON body of exactly
// -size bytes. Built to never be the bottleneck: keep-alive, one goroutine per connection,
// a timer per request, no per-request logging. Two engines serve the same bytes: "raw"
// (default, raw.go: a minimal HTTP/1.1 server, about half net/http's CPU per request, so
// it takes less from the app under test on a small machine) and "std" (net/http).
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	bodyPrefix = `{"data": "`
	bodySuffix = `"}`
)

// Body is {"data": "xx...x"}, padded with 'x' to exactly size bytes.
func Body(size int) ([]byte, error) {
	overhead := len(bodyPrefix) + len(bodySuffix)
	if size < overhead {
		return nil, fmt.Errorf("-size must be at least %d bytes, got %d", overhead, size)
	}
	return []byte(bodyPrefix + strings.Repeat("x", size-overhead) + bodySuffix), nil
}

type handler struct {
	delay  time.Duration
	body   []byte
	length []string
}

var jsonType = []string{"application/json"}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	delay := h.delay
	if r.URL.RawQuery != "" {
		values, err := url.ParseQuery(r.URL.RawQuery)
		if v := values.Get("delay_ms"); err != nil || v != "" {
			d, ok := parseDelayMS(v)
			if err != nil || !ok {
				http.Error(w, "Bad Request", http.StatusBadRequest)
				return
			}
			delay = d
		}
	}
	if delay > 0 {
		timer := time.NewTimer(delay)
		select {
		case <-timer.C:
		case <-r.Context().Done():
			timer.Stop()
			return
		}
	}
	hdr := w.Header()
	hdr["Content-Type"] = jsonType
	hdr["Content-Length"] = h.length
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(h.body)
	}
}

func main() {
	host := flag.String("host", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 8080, "port to listen on")
	delay := flag.Duration("delay", 50*time.Millisecond, "wait before every response (Go duration); ?delay_ms= overrides per request")
	size := flag.Int("size", 1024, "response body size in bytes")
	engine := flag.String("server", "raw", `HTTP engine: "raw" (minimal HTTP/1.1) or "std" (net/http)`)
	version := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *version {
		fmt.Printf("pwb-upstream %s\n", runtime.Version())
		return
	}
	if *delay < 0 {
		fmt.Fprintln(os.Stderr, "upstream: -delay must not be negative")
		os.Exit(2)
	}
	if *engine != "raw" && *engine != "std" {
		fmt.Fprintln(os.Stderr, `upstream: -server must be "raw" or "std"`)
		os.Exit(2)
	}
	body, err := Body(*size)
	if err != nil {
		fmt.Fprintln(os.Stderr, "upstream:", err)
		os.Exit(2)
	}
	h := &handler{delay: *delay, body: body, length: []string{strconv.Itoa(len(body))}}
	addr := net.JoinHostPort(*host, strconv.Itoa(*port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "upstream:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: h, IdleTimeout: 120 * time.Second, ReadHeaderTimeout: 30 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
		_ = ln.Close()
	}()
	fmt.Printf("pwb-upstream listening on http://%s/ delay=%s size=%d server=%s %s\n",
		addr, *delay, *size, *engine, runtime.Version())
	if *engine == "raw" {
		err = serveRaw(ln, *delay, body)
	} else {
		err = srv.Serve(ln)
	}
	if err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, "upstream:", err)
		os.Exit(1)
	}
}
