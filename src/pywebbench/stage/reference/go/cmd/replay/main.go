// Command replay sends recorded traffic at its recorded times: open loop, each request at its
// own offset from the start whatever the server does, so a log's bursts are kept (pywebbench
// app --replay). It is vegeta's attacker (the same client, workers and result records as
// `vegeta attack`) driven by a schedule instead of a constant rate.
//
//	replay -targets T.jsonl -schedule S.txt -output R.csv -workers N -timeout 5s
//
// T.jsonl holds one vegeta JSON target per kind of request (method, url, body, header);
// S.txt one line per request, "OFFSET_NS KIND", offsets ascending from 0. R.csv is vegeta's CSV
// encoding of every result (timestamp, code, latency, bytes out, bytes in, error, body, attack,
// seq, method, url, headers): seq n is the n-th scheduled request, so its intended send time is
// the schedule's n-th offset after the attack began.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

type schedule struct {
	offsets []time.Duration
	kinds   []int
}

// Pace waits until the hits-th request's offset; the attack stops after the last one.
func (s *schedule) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if hits >= uint64(len(s.offsets)) {
		return 0, true
	}
	wait := s.offsets[hits] - elapsed
	if wait < 0 {
		return 0, false
	}
	return wait, false
}

// Rate is the schedule's mean rate over the second around elapsed (vegeta reports it only).
func (s *schedule) Rate(elapsed time.Duration) float64 {
	n := 0
	for _, offset := range s.offsets {
		if offset > elapsed-500*time.Millisecond && offset <= elapsed+500*time.Millisecond {
			n++
		}
	}
	return float64(n)
}

func readSchedule(path string, kinds int) (*schedule, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := &schedule{}
	scanner := bufio.NewScanner(f)
	line := 0
	for scanner.Scan() {
		line++
		fields := strings.Fields(scanner.Text())
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s line %d: want OFFSET_NS KIND", path, line)
		}
		offset, err1 := strconv.ParseInt(fields[0], 10, 64)
		kind, err2 := strconv.Atoi(fields[1])
		if err1 != nil || err2 != nil || kind < 0 || kind >= kinds || offset < 0 {
			return nil, fmt.Errorf("%s line %d: bad offset or kind %q", path, line, scanner.Text())
		}
		if n := len(s.offsets); n > 0 && time.Duration(offset) < s.offsets[n-1] {
			return nil, fmt.Errorf("%s line %d: offsets must not decrease", path, line)
		}
		s.offsets = append(s.offsets, time.Duration(offset))
		s.kinds = append(s.kinds, kind)
	}
	return s, scanner.Err()
}

func readTargets(path string) ([]vegeta.Target, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	next := vegeta.NewJSONTargeter(f, nil, nil)
	var targets []vegeta.Target
	for {
		var t vegeta.Target
		if err := next(&t); err == vegeta.ErrNoTargets {
			return targets, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		targets = append(targets, t)
	}
}

// targeter hands out the schedule's kinds in order: the n-th call gets the n-th request's kind.
func targeter(targets []vegeta.Target, s *schedule) vegeta.Targeter {
	var mu sync.Mutex
	next := 0
	return func(t *vegeta.Target) error {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(s.kinds) {
			return vegeta.ErrNoTargets
		}
		*t = targets[s.kinds[next]]
		next++
		return nil
	}
}

func main() {
	targetsPath := flag.String("targets", "", "vegeta JSON targets, one per kind")
	schedulePath := flag.String("schedule", "", "OFFSET_NS KIND per line")
	outputPath := flag.String("output", "", "results as vegeta CSV")
	workers := flag.Uint64("workers", 64, "requests in flight at most (and connections)")
	timeout := flag.Duration("timeout", 5*time.Second, "per-request timeout")
	keepalive := flag.Bool("keepalive", true, "reuse connections")
	flag.Parse()
	if err := run(*targetsPath, *schedulePath, *outputPath, *workers, *timeout, *keepalive); err != nil {
		fmt.Fprintln(os.Stderr, "replay:", err)
		os.Exit(1)
	}
}

func run(targetsPath, schedulePath, outputPath string, workers uint64, timeout time.Duration, keepalive bool) error {
	targets, err := readTargets(targetsPath)
	if err != nil {
		return err
	}
	if len(targets) == 0 {
		return fmt.Errorf("%s holds no target", targetsPath)
	}
	s, err := readSchedule(schedulePath, len(targets))
	if err != nil {
		return err
	}
	out, err := os.Create(outputPath)
	if err != nil {
		return err
	}
	defer out.Close()
	buffered := bufio.NewWriter(out)
	encode := vegeta.NewCSVEncoder(buffered)
	attacker := vegeta.NewAttacker(
		vegeta.Workers(workers), vegeta.MaxWorkers(workers),
		vegeta.Connections(int(workers)), vegeta.MaxConnections(int(workers)),
		vegeta.Timeout(timeout), vegeta.KeepAlive(keepalive), vegeta.MaxBody(0), vegeta.Redirects(-1),
	)
	for result := range attacker.Attack(targeter(targets, s), s, 0, "replay") {
		if err := encode(result); err != nil {
			return err
		}
	}
	return buffered.Flush()
}
