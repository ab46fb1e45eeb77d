package crashpoint

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// Environment variables read at process start; see doc.go.
const (
	EnvCrash  = "PIPELINE_CRASHPOINT"
	EnvCounts = "PIPELINE_CRASHPOINT_COUNTS"
)

// AnySite as the SITE of PIPELINE_CRASHPOINT counts the hits of every site.
const AnySite = "*"

// active is set when either variable is; Hit does nothing else otherwise.
var active atomic.Bool

var st state

// state is the hit counting of a process with a variable set.
type state struct {
	mu     sync.Mutex
	site   string // site to crash at, AnySite, or "" for none
	n      int    // crash at this hit of site
	stop   bool   // stop (SIGSTOP) there instead of crashing
	total  int    // hits of all sites
	counts map[string]int
	file   string // where WriteCounts writes, or ""
	kill   func() // kills the process; replaced in tests
	pause  func() // stops the process; replaced in tests
}

func init() {
	crash, counts := os.Getenv(EnvCrash), os.Getenv(EnvCounts)
	if err := st.configure(crash, counts, killSelf, stopSelf); err != nil {
		panic(err)
	}
	active.Store(crash != "" || counts != "")
}

// Hit marks a crash site. It does nothing unless PIPELINE_CRASHPOINT or
// PIPELINE_CRASHPOINT_COUNTS was set at process start; then it counts the
// hit and, if this is the hit PIPELINE_CRASHPOINT names, kills the process
// with SIGKILL and never returns.
func Hit(site string) {
	if active.Load() {
		st.hit(site)
	}
}

// WriteCounts writes the hits per site so far, as a JSON object, to the
// file PIPELINE_CRASHPOINT_COUNTS names. It does nothing if the variable was
// not set. A command calls it just before exiting normally.
func WriteCounts() error {
	if !active.Load() {
		return nil
	}
	return st.writeCounts()
}

// parse reads a PIPELINE_CRASHPOINT value, "SITE:N" or "*:N", either
// followed by ":stop".
func parse(spec string) (site string, n int, stop bool, err error) {
	spec, stop = strings.CutSuffix(spec, ":stop")
	i := strings.LastIndexByte(spec, ':')
	if i <= 0 {
		return "", 0, false, fmt.Errorf("crashpoint: %s=%q: want SITE:N or *:N, optionally followed by :stop", EnvCrash, spec)
	}
	n, err = strconv.Atoi(spec[i+1:])
	if err != nil || n < 1 {
		return "", 0, false, fmt.Errorf("crashpoint: %s=%q: N must be an integer >= 1", EnvCrash, spec)
	}
	return spec[:i], n, stop, nil
}

func (s *state) configure(crash, countsFile string, kill, pause func()) error {
	*s = state{counts: map[string]int{}, file: countsFile, kill: kill, pause: pause}
	if crash == "" {
		return nil
	}
	var err error
	s.site, s.n, s.stop, err = parse(crash)
	return err
}

func (s *state) hit(site string) {
	s.mu.Lock()
	s.counts[site]++
	s.total++
	crash := false
	switch s.site {
	case AnySite:
		crash = s.total == s.n
	case site:
		crash = s.counts[site] == s.n
	}
	s.mu.Unlock()
	switch {
	case crash && s.stop:
		s.pause()
	case crash:
		s.kill()
	}
}

func (s *state) writeCounts() error {
	if s.file == "" {
		return nil
	}
	s.mu.Lock()
	data, err := json.Marshal(s.counts) // keys sorted
	s.mu.Unlock()
	if err == nil {
		err = os.WriteFile(s.file, append(data, '\n'), 0o644)
	}
	if err != nil {
		return fmt.Errorf("crashpoint: write counts to %s: %w", s.file, err)
	}
	return nil
}

// killSelf sends SIGKILL to the process (os.Process.Kill is SIGKILL on
// Unix, TerminateProcess on Windows). The kernel delivers it before the
// call returns to this thread, and stops the other threads with it.
func killSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Kill()
	}
	// Not reached where the kill succeeded; never let the caller go on.
	os.Exit(137)
}

// stopSelf sends SIGSTOP to the process: it stays stopped until a SIGCONT,
// and a signal sent meanwhile (SIGINT, say) is handled when it continues.
// A test stops a command at a known point this way and signals it there.
func stopSelf() {
	syscall.Kill(os.Getpid(), syscall.SIGSTOP)
}
