package main

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// memoryUsage is the server's memory and the kernel's TCP socket memory at three moments: before
// any idle connection is opened (base), once all are open (held), and at the window's end.
type memoryUsage struct {
	RSSBaseKB     int64  `json:"rss_base_kb"`
	RSSHeldKB     int64  `json:"rss_held_kb"`
	RSSEndKB      int64  `json:"rss_end_kb"`
	SockPagesBase int64  `json:"sock_pages_base"`
	SockPagesHeld int64  `json:"sock_pages_held"`
	TCPInuseBase  int64  `json:"tcp_inuse_base"`
	TCPInuseHeld  int64  `json:"tcp_inuse_held"`
	ServerNofile  uint64 `json:"server_nofile"`
	Processes     int    `json:"processes"`
}

func runtimeVersion() string { return runtime.Version() }

// treeRSS sums VmRSS (kB) over the roots and every descendant: a server's master and workers.
func treeRSS(roots []int) (int64, int) {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// the command name may hold spaces: the fields after its closing parenthesis are fixed
		text := string(data)
		end := strings.LastIndexByte(text, ')')
		fields := strings.Fields(text[end+1:])
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		children[ppid] = append(children[ppid], pid)
	}
	total, count := int64(0), 0
	seen := map[int]bool{}
	queue := append([]int{}, roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		if kb, ok := statusField(pid, "VmRSS:"); ok {
			total += kb
			count++
		}
		queue = append(queue, children[pid]...)
	}
	return total, count
}

func statusField(pid int, name string) (int64, bool) {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	scan := bufio.NewScanner(f)
	for scan.Scan() {
		line := scan.Text()
		if strings.HasPrefix(line, name) {
			fields := strings.Fields(line[len(name):])
			if len(fields) > 0 {
				v, err := strconv.ParseInt(fields[0], 10, 64)
				return v, err == nil
			}
		}
	}
	return 0, false
}

// sockstat reads the TCP line of /proc/net/sockstat: sockets in use and pages of socket memory
// (machine-wide: with client and server on one host both ends count).
func sockstat() (inuse, pages int64) {
	data, err := os.ReadFile("/proc/net/sockstat")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "TCP:") {
			continue
		}
		fields := strings.Fields(line[4:])
		for i := 0; i+1 < len(fields); i += 2 {
			v, _ := strconv.ParseInt(fields[i+1], 10, 64)
			switch fields[i] {
			case "inuse":
				inuse = v
			case "mem":
				pages = v
			}
		}
	}
	return inuse, pages
}

// processNofile is the soft RLIMIT_NOFILE of a running process (its /proc/PID/limits).
func processNofile(pid int) uint64 {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "limits"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "Max open files") {
			fields := strings.Fields(line[len("Max open files"):])
			if len(fields) > 0 {
				v, _ := strconv.ParseUint(fields[0], 10, 64)
				return v
			}
		}
	}
	return 0
}

func parsePids(text string) []int {
	var pids []int
	for _, part := range strings.Split(text, ",") {
		if pid, err := strconv.Atoi(strings.TrimSpace(part)); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// serverMemory reads the server's memory (given its root pids) around a driver's phases: before it
// opens its connections, once they are open, at the window's end. Without pids it reads nothing.
type serverMemory struct {
	roots []int
	usage *memoryUsage
}

func watchServer(pids string) *serverMemory {
	w := &serverMemory{roots: parsePids(pids)}
	if len(w.roots) > 0 {
		w.usage = &memoryUsage{ServerNofile: processNofile(w.roots[0])}
		w.usage.RSSBaseKB, w.usage.Processes = treeRSS(w.roots)
		w.usage.TCPInuseBase, w.usage.SockPagesBase = sockstat()
	}
	return w
}

func (w *serverMemory) held() {
	if w.usage != nil {
		time.Sleep(100 * time.Millisecond) // the last accepts finish their bookkeeping
		w.usage.RSSHeldKB, _ = treeRSS(w.roots)
		w.usage.TCPInuseHeld, w.usage.SockPagesHeld = sockstat()
	}
}

func (w *serverMemory) end() *memoryUsage {
	if w.usage != nil {
		w.usage.RSSEndKB, _ = treeRSS(w.roots)
	}
	return w.usage
}
