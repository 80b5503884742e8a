// Command reference is the Go reference implementation of the benchmark app contract
// (src/pywebbench/apps/CONTRACT.md): the same endpoints, status codes, content types and
// byte-identical bodies as the Python apps, configured by the same PWB_* variables.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"pywebbench.local/reference/internal/pyjson"
)

var (
	textType  = []string{"text/plain; charset=utf-8"}
	jsonType  = []string{"application/json"}
	htmlType  = []string{"text/html; charset=utf-8"}
	helloBody = []byte("Hello World!")
)

type config struct {
	dsn          string
	dbDelay      string // SQL literal for pg_sleep
	dbRows       int
	dbPool       int
	upstreamURL  string
	cpuSize      int
	templatePath string
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

func loadConfig() (config, error) {
	c := config{
		dsn:          os.Getenv("PWB_DSN"),
		upstreamURL:  os.Getenv("PWB_UPSTREAM_URL"),
		templatePath: os.Getenv("PWB_TEMPLATE_RENDERED"),
	}
	delay, err := strconv.ParseFloat(envOr("PWB_DB_DELAY", "0.02"), 64)
	if err != nil || delay < 0 {
		return c, fmt.Errorf("PWB_DB_DELAY: not a non-negative number: %q", os.Getenv("PWB_DB_DELAY"))
	}
	c.dbDelay = strconv.FormatFloat(delay, 'f', -1, 64)
	ints := []struct {
		name, def string
		min       int
		dst       *int
	}{
		{"PWB_DB_ROWS", "1000000", 1, &c.dbRows},
		{"PWB_DB_POOL", "0", 0, &c.dbPool},
		{"PWB_CPU_SIZE", "100000", 0, &c.cpuSize},
	}
	for _, v := range ints {
		n, err := strconv.Atoi(envOr(v.name, v.def))
		if err != nil || n < v.min {
			return c, fmt.Errorf("%s: want an integer >= %d, got %q", v.name, v.min, os.Getenv(v.name))
		}
		*v.dst = n
	}
	return c, nil
}

// querier is what *pgx.Conn and *pgxpool.Conn have in common.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

type app struct {
	cfg      config
	connCfg  *pgx.ConnConfig // connection per request (PWB_DB_POOL=0)
	pool     *pgxpool.Pool   // app-side pool (PWB_DB_POOL>0)
	client   *http.Client
	template []byte
	rngs     sync.Pool
}

var rngSeq int64

func newApp(cfg config) (*app, error) {
	a := &app{cfg: cfg}
	a.rngs.New = func() any {
		return rand.New(rand.NewSource(time.Now().UnixNano() + atomic.AddInt64(&rngSeq, 1)*7919))
	}
	if cfg.dsn != "" {
		if cfg.dbPool > 0 {
			pc, err := pgxpool.ParseConfig(cfg.dsn)
			if err != nil {
				return nil, fmt.Errorf("PWB_DSN: %w", err)
			}
			pc.MaxConns = int32(cfg.dbPool)
			// One simple-protocol Query message per statement: one round trip, no
			// server-side prepared statements (safe behind pgbouncer in any pool mode).
			pc.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
			pool, err := pgxpool.NewWithConfig(context.Background(), pc)
			if err != nil {
				return nil, fmt.Errorf("database pool: %w", err)
			}
			a.pool = pool
		} else {
			cc, err := pgx.ParseConfig(cfg.dsn)
			if err != nil {
				return nil, fmt.Errorf("PWB_DSN: %w", err)
			}
			cc.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
			a.connCfg = cc
		}
	}
	if cfg.upstreamURL != "" {
		a.client = &http.Client{
			Timeout: 60 * time.Second,
			Transport: &http.Transport{
				Proxy: nil,
				DialContext: (&net.Dialer{
					Timeout:   10 * time.Second,
					KeepAlive: 30 * time.Second,
				}).DialContext,
				MaxIdleConns:        0, // no global limit
				MaxIdleConnsPerHost: 16384,
				MaxConnsPerHost:     0, // no limit: one connection per in-flight request
				IdleConnTimeout:     90 * time.Second,
				DisableCompression:  true,
				ForceAttemptHTTP2:   false,
			},
		}
	}
	if cfg.templatePath != "" {
		body, err := os.ReadFile(cfg.templatePath)
		if err != nil {
			return nil, fmt.Errorf("PWB_TEMPLATE_RENDERED: %w", err)
		}
		a.template = body
	}
	return a, nil
}

func (a *app) randomKey() int {
	r := a.rngs.Get().(*rand.Rand)
	k := r.Intn(a.cfg.dbRows) + 1
	a.rngs.Put(r)
	return k
}

// withConn runs fn on one connection: a fresh one per request, or one from the pool.
func (a *app) withConn(ctx context.Context, fn func(q querier) error) error {
	if a.pool != nil {
		conn, err := a.pool.Acquire(ctx)
		if err != nil {
			return err
		}
		defer conn.Release()
		return fn(conn)
	}
	if a.connCfg == nil {
		return errors.New("PWB_DSN is not set")
	}
	conn, err := pgx.ConnectConfig(ctx, a.connCfg.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return fn(conn)
}

func write(w http.ResponseWriter, status int, ctype []string, body []byte) {
	h := w.Header()
	h["Content-Type"] = ctype
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func fail(w http.ResponseWriter, status int, err error) {
	write(w, status, textType, []byte(err.Error()))
}

func (a *app) hello(w http.ResponseWriter, r *http.Request) {
	write(w, http.StatusOK, textType, helloBody)
}

func (a *app) db(w http.ResponseWriter, r *http.Request) {
	key := a.randomKey()
	sql := "SELECT b.a, b.b FROM bench b, pg_sleep(" + a.cfg.dbDelay + ") WHERE b.a = " + strconv.Itoa(key)
	var id int64
	var b string
	err := a.withConn(r.Context(), func(q querier) error {
		return q.QueryRow(r.Context(), sql).Scan(&id, &b)
	})
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	buf := make([]byte, 0, 64+len(b))
	buf = append(buf, `{"a": "`...)
	buf = append(buf, fmt.Sprintf("%010d", id)...)
	buf = append(buf, `", "b": `...)
	buf = pyjson.String(buf, b)
	buf = append(buf, '}')
	write(w, http.StatusOK, jsonType, buf)
}

type row struct {
	a int64
	b string
}

func benchRows(ctx context.Context, q querier, limit int) ([]row, error) {
	rows, err := q.Query(ctx, "SELECT a, b FROM bench WHERE a <= "+strconv.Itoa(limit)+" ORDER BY a")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]row, 0, limit)
	for rows.Next() {
		var x row
		if err := rows.Scan(&x.a, &x.b); err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

func (a *app) api(w http.ResponseWriter, r *http.Request) {
	key := a.randomKey()
	var rows []row
	err := a.withConn(r.Context(), func(q querier) error {
		if _, err := q.Exec(r.Context(), "INSERT INTO writes (a) VALUES ("+strconv.Itoa(key)+")"); err != nil {
			return err
		}
		var err error
		rows, err = benchRows(r.Context(), q, 100)
		return err
	})
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	items := make([]byte, 0, 64*len(rows))
	count := 0
	for _, x := range rows {
		if x.b == "" || x.b[0] < 'a' || x.b[0] > 'm' {
			continue
		}
		if count > 0 {
			items = append(items, ", "...)
		}
		count++
		items = append(items, `{"a": `...)
		items = pyjson.Int(items, x.a)
		items = append(items, `, "b": `...)
		items = pyjson.String(items, x.b)
		items = append(items, '}')
	}
	buf := make([]byte, 0, len(items)+40)
	buf = append(buf, `{"count": `...)
	buf = pyjson.Int(buf, int64(count))
	buf = append(buf, `, "items": [`...)
	buf = append(buf, items...)
	buf = append(buf, "]}"...)
	write(w, http.StatusOK, jsonType, buf)
}

func (a *app) posts(w http.ResponseWriter, r *http.Request) {
	var rows []row
	err := a.withConn(r.Context(), func(q querier) error {
		var err error
		rows, err = benchRows(r.Context(), q, 300)
		return err
	})
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	buf := make([]byte, 0, 48*len(rows)+2)
	buf = append(buf, '[')
	for i, x := range rows {
		if i > 0 {
			buf = append(buf, ", "...)
		}
		buf = append(buf, `{"id": `...)
		buf = pyjson.Int(buf, x.a)
		buf = append(buf, `, "title": `...)
		buf = pyjson.String(buf, x.b)
		buf = append(buf, '}')
	}
	buf = append(buf, ']')
	write(w, http.StatusOK, jsonType, buf)
}

func (a *app) upstream(w http.ResponseWriter, r *http.Request) {
	if a.client == nil {
		fail(w, http.StatusInternalServerError, errors.New("PWB_UPSTREAM_URL is not set"))
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, a.cfg.upstreamURL, nil)
	if err != nil {
		fail(w, http.StatusInternalServerError, err)
		return
	}
	resp, err := a.client.Do(req)
	if err != nil {
		fail(w, http.StatusBadGateway, err)
		return
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		fail(w, http.StatusBadGateway, err)
		return
	}
	if resp.StatusCode != http.StatusOK {
		fail(w, http.StatusBadGateway, fmt.Errorf("upstream answered %d", resp.StatusCode))
		return
	}
	write(w, http.StatusOK, jsonType, body)
}

func (a *app) templatePage(w http.ResponseWriter, r *http.Request) {
	if a.template == nil {
		http.NotFound(w, r)
		return
	}
	write(w, http.StatusOK, htmlType, a.template)
}

// CountPrimes counts the primes p < n with a sieve of Eratosthenes, as /cpu does in Python.
func CountPrimes(n int) int {
	if n < 3 {
		return 0
	}
	composite := make([]bool, n)
	count := 0
	for i := 2; i < n; i++ {
		if composite[i] {
			continue
		}
		count++
		if i <= (n-1)/i {
			for j := i * i; j < n; j += i {
				composite[j] = true
			}
		}
	}
	return count
}

func (a *app) cpu(w http.ResponseWriter, r *http.Request) {
	count := CountPrimes(a.cfg.cpuSize)
	buf := make([]byte, 0, 48)
	buf = append(buf, `{"n": `...)
	buf = pyjson.Int(buf, int64(a.cfg.cpuSize))
	buf = append(buf, `, "primes": `...)
	buf = pyjson.Int(buf, int64(count))
	buf = append(buf, '}')
	write(w, http.StatusOK, jsonType, buf)
}

func getOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h(w, r)
	}
}

func (a *app) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", getOnly(a.hello))
	mux.HandleFunc("/db", getOnly(a.db))
	mux.HandleFunc("/upstream", getOnly(a.upstream))
	mux.HandleFunc("/template", getOnly(a.templatePage))
	mux.HandleFunc("/api", getOnly(a.api))
	mux.HandleFunc("/posts", getOnly(a.posts))
	mux.HandleFunc("/cpu", getOnly(a.cpu))
	return mux
}

func pgxVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/jackc/pgx/v5" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

func main() {
	host := flag.String("host", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 8000, "port to listen on")
	version := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *version {
		fmt.Printf("pwb-reference %s pgx/%s\n", runtime.Version(), pgxVersion())
		return
	}
	cfg, err := loadConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, "reference:", err)
		os.Exit(2)
	}
	a, err := newApp(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "reference:", err)
		os.Exit(2)
	}
	addr := net.JoinHostPort(*host, strconv.Itoa(*port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "reference:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: a.routes(), IdleTimeout: 120 * time.Second, ReadHeaderTimeout: 30 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Printf("pwb-reference listening on http://%s/ %s pgx/%s\n", addr, runtime.Version(), pgxVersion())
	err = srv.Serve(ln)
	if a.pool != nil {
		a.pool.Close()
	}
	if err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, "reference:", err)
		os.Exit(1)
	}
}
