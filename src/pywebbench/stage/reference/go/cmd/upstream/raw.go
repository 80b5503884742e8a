package main

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"net/url"
	"strconv"
	"time"
)

// The raw engine: a minimal HTTP/1.1 server for this one fixed GET resource, about half
// the CPU per request of net/http (no per-request allocations of headers, contexts or
// background reads). It speaks keep-alive (HTTP/1.1 default, HTTP/1.0 with "Connection:
// keep-alive"), pipelining, HEAD, Content-Length bodies (discarded) and answers anything it
// does not support (chunked request bodies, oversized headers, malformed requests) with an
// error status and a closed connection.

const (
	maxLineBytes   = 8 << 10  // request line or one header line
	maxHeaderBytes = 64 << 10 // all header lines
	maxBodyBytes   = 1 << 20  // a body we read and discard
)

type connMode int

const (
	connDefault   connMode = iota // HTTP/1.1 keep-alive: no Connection header needed
	connKeepAlive                 // HTTP/1.0 client that asked for keep-alive
	connClose
)

// rawResponses are built once: {GET, HEAD} x {default, keep-alive, close}.
type rawResponses [2][3][]byte

func buildRawResponses(body []byte) *rawResponses {
	var r rawResponses
	for head := 0; head < 2; head++ {
		for mode := connDefault; mode <= connClose; mode++ {
			var b bytes.Buffer
			b.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ")
			b.WriteString(strconv.Itoa(len(body)))
			b.WriteString("\r\n")
			b.WriteString(connHeader(mode))
			b.WriteString("\r\n")
			if head == 0 {
				b.Write(body)
			}
			r[head][mode] = b.Bytes()
		}
	}
	return &r
}

func connHeader(mode connMode) string {
	switch mode {
	case connKeepAlive:
		return "Connection: keep-alive\r\n"
	case connClose:
		return "Connection: close\r\n"
	}
	return ""
}

func errorResponse(status int, text string, mode connMode, extra string) []byte {
	body := text + "\n"
	return []byte("HTTP/1.1 " + strconv.Itoa(status) + " " + text + "\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n" +
		extra + connHeader(mode) + "\r\n" + body)
}

type rawRequest struct {
	head      bool
	allowed   bool // GET or HEAD
	delay     time.Duration
	badDelay  bool
	mode      connMode
	bodyBytes int64
}

type httpError struct {
	status int
	text   string
}

func (e *httpError) Error() string { return e.text }

var (
	errBadRequest     = &httpError{400, "Bad Request"}
	errHeaderTooLarge = &httpError{431, "Request Header Fields Too Large"}
	errBodyTooLarge   = &httpError{413, "Payload Too Large"}
	errChunked        = &httpError{501, "Not Implemented"}
)

func trimCRLF(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
	}
	return line
}

func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, errHeaderTooLarge
	}
	if err != nil {
		return nil, err
	}
	return trimCRLF(line), nil
}

// readRawRequest reads one request head; an *httpError means answer it and close.
func readRawRequest(br *bufio.Reader, defaultDelay time.Duration) (rawRequest, error) {
	req := rawRequest{delay: defaultDelay}
	var line []byte
	var err error
	for { // RFC 9112 2.2: ignore at least one empty line before the request line
		if line, err = readLine(br); err != nil {
			return req, err
		}
		if len(line) > 0 {
			break
		}
	}
	sp1 := bytes.IndexByte(line, ' ')
	sp2 := bytes.LastIndexByte(line, ' ')
	if sp1 <= 0 || sp2 <= sp1+1 {
		return req, errBadRequest
	}
	method, target, proto := line[:sp1], line[sp1+1:sp2], line[sp2+1:]
	http10 := false
	switch string(proto) {
	case "HTTP/1.1":
	case "HTTP/1.0":
		http10 = true
	default:
		return req, errBadRequest
	}
	req.head = string(method) == "HEAD"
	req.allowed = req.head || string(method) == "GET"
	if q := bytes.IndexByte(target, '?'); q >= 0 {
		values, err := url.ParseQuery(string(target[q+1:]))
		if err != nil {
			req.badDelay = true
		} else if v := values.Get("delay_ms"); v != "" {
			d, ok := parseDelayMS(v)
			req.delay, req.badDelay = d, !ok
		}
	}
	close, keepAlive := false, false
	contentLength := int64(-1)
	total := len(line)
	for {
		if line, err = readLine(br); err != nil {
			if err == errHeaderTooLarge {
				return req, err
			}
			return req, errBadRequest
		}
		if len(line) == 0 {
			break
		}
		if total += len(line); total > maxHeaderBytes {
			return req, errHeaderTooLarge
		}
		if line[0] == ' ' || line[0] == '\t' { // obsolete line folding
			return req, errBadRequest
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return req, errBadRequest
		}
		name, value := line[:colon], bytes.Trim(line[colon+1:], " \t")
		switch {
		case bytes.EqualFold(name, []byte("Connection")):
			for _, token := range bytes.Split(value, []byte(",")) {
				token = bytes.Trim(token, " \t")
				if bytes.EqualFold(token, []byte("close")) {
					close = true
				} else if bytes.EqualFold(token, []byte("keep-alive")) {
					keepAlive = true
				}
			}
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || n < 0 || (contentLength >= 0 && n != contentLength) {
				return req, errBadRequest
			}
			contentLength = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return req, errChunked
		}
	}
	switch {
	case close:
		req.mode = connClose
	case http10 && keepAlive:
		req.mode = connKeepAlive
	case http10:
		req.mode = connClose
	}
	if contentLength > maxBodyBytes {
		return req, errBodyTooLarge
	}
	if contentLength > 0 {
		req.bodyBytes = contentLength
	}
	return req, nil
}

func parseDelayMS(v string) (time.Duration, bool) {
	ms, err := strconv.ParseFloat(v, 64)
	if err != nil || ms < 0 || ms > 3600e3 {
		return 0, false
	}
	return time.Duration(ms * float64(time.Millisecond)), true
}

func serveRawConn(c net.Conn, defaultDelay time.Duration, responses *rawResponses) {
	defer c.Close()
	br := bufio.NewReaderSize(c, maxLineBytes)
	for {
		req, err := readRawRequest(br, defaultDelay)
		if err != nil {
			var he *httpError
			if errors.As(err, &he) {
				_, _ = c.Write(errorResponse(he.status, he.text, connClose, ""))
			}
			return
		}
		if req.bodyBytes > 0 {
			if _, err := br.Discard(int(req.bodyBytes)); err != nil {
				return
			}
		}
		var out []byte
		switch {
		case !req.allowed:
			out = errorResponse(405, "Method Not Allowed", req.mode, "Allow: GET, HEAD\r\n")
		case req.badDelay:
			out = errorResponse(400, "Bad Request", req.mode, "")
		default:
			if req.delay > 0 {
				time.Sleep(req.delay)
			}
			head := 0
			if req.head {
				head = 1
			}
			out = responses[head][req.mode]
		}
		if _, err := c.Write(out); err != nil || req.mode == connClose {
			return
		}
	}
}

// serveRaw accepts until the listener closes, one goroutine per connection.
func serveRaw(ln net.Listener, defaultDelay time.Duration, body []byte) error {
	responses := buildRawResponses(body)
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			// e.g. EMFILE: back off like net/http does, then accept again
			if backoff == 0 {
				backoff = 5 * time.Millisecond
			} else if backoff *= 2; backoff > time.Second {
				backoff = time.Second
			}
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		go serveRawConn(c, defaultDelay, responses)
	}
}
