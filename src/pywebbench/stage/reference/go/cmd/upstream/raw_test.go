package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func startRaw(t *testing.T, delay time.Duration, size int) (string, []byte) {
	t.Helper()
	body, err := Body(size)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = serveRaw(ln, delay, body) }()
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String(), body
}

// drain reads the body to the end so the client may reuse the connection.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

func TestBodyIsExactSizeJSON(t *testing.T) {
	b, err := Body(20)
	if err != nil || string(b) != `{"data": "xxxxxxxx"}` {
		t.Fatalf("%q %v", b, err)
	}
	if _, err := Body(11); err == nil {
		t.Fatal("size 11 accepted")
	}
}

func TestRawServesNetHTTPClientWithKeepAlive(t *testing.T) {
	addr, body := startRaw(t, 0, 100)
	var mu sync.Mutex
	dials := 0
	client := &http.Client{Transport: &http.Transport{Dial: func(n, a string) (net.Conn, error) {
		mu.Lock()
		dials++
		mu.Unlock()
		return net.Dial(n, a)
	}}}
	for i := 0; i < 5; i++ {
		resp, err := client.Get("http://" + addr + "/x/y?a=b")
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(got) != string(body) || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%d %q %v", resp.StatusCode, got, resp.Header)
		}
	}
	if dials != 1 {
		t.Fatalf("%d connections for 5 sequential requests, want 1 (keep-alive)", dials)
	}
	resp, err := client.Post("http://"+addr+"/", "text/plain", strings.NewReader("some body"))
	if err != nil {
		t.Fatal(err)
	}
	drain(resp)
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Fatalf("POST: %d", resp.StatusCode)
	}
	resp, err = client.Head("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	drain(resp)
	if resp.StatusCode != 200 || resp.ContentLength != 100 {
		t.Fatalf("HEAD: %d %d", resp.StatusCode, resp.ContentLength)
	}
	resp, err = client.Get("http://" + addr + "/?delay_ms=oops")
	if err != nil {
		t.Fatal(err)
	}
	drain(resp)
	if resp.StatusCode != 400 {
		t.Fatalf("bad delay: %d", resp.StatusCode)
	}
	if dials != 1 {
		t.Fatalf("%d connections, want 1: the 405 and 400 answers keep the connection", dials)
	}
}

func TestRawDelayPerRequest(t *testing.T) {
	addr, _ := startRaw(t, 150*time.Millisecond, 50)
	for _, c := range []struct {
		path     string
		min, max time.Duration
	}{{"/", 150 * time.Millisecond, time.Second}, {"/?delay_ms=0", 0, 100 * time.Millisecond},
		{"/?delay_ms=30.5", 30 * time.Millisecond, 140 * time.Millisecond}} {
		start := time.Now()
		resp, err := http.Get("http://" + addr + c.path)
		if err != nil {
			t.Fatal(err)
		}
		drain(resp)
		if took := time.Since(start); took < c.min || took > c.max {
			t.Errorf("%s took %v, want %v..%v", c.path, took, c.min, c.max)
		}
	}
}

func exchange(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(bufio.NewReader(c)) // until the server closes
	return string(out)
}

func TestRawConnectionSemantics(t *testing.T) {
	addr, body := startRaw(t, 0, 12)
	ok11 := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n" + string(body)
	okClose := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\nConnection: close\r\n\r\n" + string(body)
	okKeep := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\nConnection: keep-alive\r\n\r\n" + string(body)
	cases := []struct{ name, in, want string }{
		{"pipelined then close", "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", ok11 + okClose},
		{"http/1.0 closes", "GET / HTTP/1.0\r\n\r\n", okClose},
		{"http/1.0 keep-alive", "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\nGET / HTTP/1.0\r\n\r\n", okKeep + okClose},
		{"body discarded", "POST / HTTP/1.1\r\ncontent-length: 3\r\n\r\nabcGET / HTTP/1.1\r\nConnection: close\r\n\r\n", "405"},
		{"chunked refused", "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "HTTP/1.1 501 "},
		{"garbage", "hello\r\n\r\n", "HTTP/1.1 400 "},
		{"bad proto", "GET / HTTP/2.0\r\n\r\n", "HTTP/1.1 400 "},
		{"huge header", "GET / HTTP/1.1\r\nX: " + strings.Repeat("a", 9000) + "\r\n\r\n", "HTTP/1.1 431 "},
	}
	for _, c := range cases {
		got := exchange(t, addr, c.in)
		if c.name == "body discarded" {
			if !strings.HasPrefix(got, "HTTP/1.1 405 ") || !strings.HasSuffix(got, okClose) {
				t.Errorf("%s: %q", c.name, got)
			}
			continue
		}
		if !strings.HasPrefix(got, c.want) || (len(c.want) > 20 && got != c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
