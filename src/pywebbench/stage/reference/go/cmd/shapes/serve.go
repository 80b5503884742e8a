package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
)

// The answers every shape's app route gives (apps/pwb_shapes_*.py): 1 MiB in 64 KiB chunks, each
// chunk the bytes 0..255 over and over.
const (
	chunkSize  = 64 * 1024
	chunks     = 16
	maxEvents  = 100000
	helloReply = "Hello World!"
)

var chunk = func() []byte {
	b := make([]byte, chunkSize)
	for i := range b {
		b[i] = byte(i % 256)
	}
	return b
}()

// runServe is the server that costs nothing next to a Python stack: each generator's ceiling is
// what it reaches against this one, as wrk's is nginx serving a static file.
func runServe(args []string) {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	host := fs.String("host", "127.0.0.1", "address to listen on")
	port := fs.Int("port", 8080, "port to listen on")
	_ = fs.Parse(args)
	raiseNofile(1 << 20)
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = []string{"text/plain; charset=utf-8"}
		_, _ = io.WriteString(w, helloReply)
	})
	mux.HandleFunc("/stream", serveStream)
	mux.HandleFunc("/upload", serveUpload)
	mux.HandleFunc("/sse", serveSSE)
	upgrader := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			kind, data, err := c.ReadMessage()
			if err != nil || c.WriteMessage(kind, data) != nil {
				return
			}
		}
	})
	ln, err := net.Listen("tcp", net.JoinHostPort(*host, strconv.Itoa(*port)))
	if err != nil {
		fail(err)
	}
	server := &http.Server{Handler: mux} // no idle timeout: idle connections stay as long as the client holds them
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		server.Close()
	}()
	if err := server.Serve(ln); err != nil && err != http.ErrServerClosed {
		fail(err)
	}
}

func serveStream(w http.ResponseWriter, r *http.Request) {
	w.Header()["Content-Type"] = []string{"application/octet-stream"}
	w.Header()["Content-Length"] = []string{strconv.Itoa(chunkSize * chunks)}
	for i := 0; i < chunks; i++ {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

func serveUpload(w http.ResponseWriter, r *http.Request) {
	n, _ := io.Copy(io.Discard, r.Body)
	w.Header()["Content-Type"] = []string{"text/plain; charset=utf-8"}
	_, _ = io.WriteString(w, strconv.FormatInt(n, 10))
}

// serveSSE sends ?n= events at ?rate= per second, each stamped with its send time (ns), paced from
// the stream's start so a late event does not delay the next.
func serveSSE(w http.ResponseWriter, r *http.Request) {
	n, rate := eventParams(r)
	w.Header()["Content-Type"] = []string{"text/event-stream"}
	w.Header()["Cache-Control"] = []string{"no-cache"}
	flusher, _ := w.(http.Flusher)
	start := time.Now()
	for k := 0; k < n; k++ {
		time.Sleep(time.Until(start.Add(time.Duration(float64(k) / rate * float64(time.Second)))))
		if _, err := fmt.Fprintf(w, "id: %d\ndata: %d\n\n", k, time.Now().UnixNano()); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// eventParams reads ?n= (default 3, at most maxEvents) and ?rate= (default 1000 per second).
func eventParams(r *http.Request) (int, float64) {
	n, rate := 3, 1000.0
	if v, err := strconv.Atoi(r.URL.Query().Get("n")); err == nil && v >= 0 {
		n = min(v, maxEvents)
	}
	if v, err := strconv.ParseFloat(r.URL.Query().Get("rate"), 64); err == nil && v > 0 {
		rate = v
	}
	return n, rate
}
