package crashpoint

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		spec string
		site string
		n    int
	}{
		{"store.before-rename:1", "store.before-rename", 1},
		{"*:17", AnySite, 17},
		{"a:b:3", "a:b", 3},
	} {
		site, n, stop, err := parse(tc.spec)
		if err != nil || site != tc.site || n != tc.n || stop {
			t.Errorf("parse(%q) = %q, %d, %v; want %q, %d", tc.spec, site, n, err, tc.site, tc.n)
		}
	}
	if site, n, stop, err := parse("a:2:stop"); err != nil || site != "a" || n != 2 || !stop {
		t.Errorf("parse(a:2:stop) = %q, %d, %v, %v", site, n, stop, err)
	}
	for _, bad := range []string{"x", ":3", "x:", "x:0", "x:-1", "x:1.5", "x: 2", "x:stop", "x:1:stop:stop"} {
		if _, _, _, err := parse(bad); err == nil || !strings.Contains(err.Error(), EnvCrash) {
			t.Errorf("parse(%q): err = %v, want one naming %s", bad, err, EnvCrash)
		}
	}
}

// run configures a state with a fake kill and hits sites in order; it
// returns the index of the hit that killed, or -1.
func run(t *testing.T, crash string, sites ...string) (killedAt int, s *state) {
	t.Helper()
	s = &state{}
	killed := -1
	i := 0
	mark := func() {
		if killed < 0 {
			killed = i
		}
	}
	if err := s.configure(crash, "", mark, mark); err != nil {
		t.Fatal(err)
	}
	for i = range sites {
		s.hit(sites[i])
	}
	return killed, s
}

func TestHitKillsAtTheNthHitOfItsSite(t *testing.T) {
	sites := []string{"a", "b", "a", "b", "b", "a"}
	for _, tc := range []struct {
		crash string
		at    int
	}{
		{"", -1},
		{"a:1", 0},
		{"a:2", 2},
		{"b:3", 4},
		{"a:4", -1}, // a is hit three times
		{"c:1", -1},
		{"*:1", 0},
		{"*:4", 3},
		{"*:6", 5},
		{"*:7", -1},
	} {
		if at, _ := run(t, tc.crash, sites...); at != tc.at {
			t.Errorf("%q: killed at hit %d, want %d", tc.crash, at, tc.at)
		}
	}
}

func TestWriteCounts(t *testing.T) {
	_, s := run(t, "", "a", "b", "a")
	s.file = filepath.Join(t.TempDir(), "counts.json")
	if err := s.writeCounts(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.file)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]int
	if err := json.Unmarshal(data, &got); err != nil || len(got) != 2 || got["a"] != 2 || got["b"] != 1 {
		t.Fatalf("counts file %q (%v), want a:2 b:1", data, err)
	}
	s.file = filepath.Join(t.TempDir(), "missing", "counts.json")
	if err := s.writeCounts(); err == nil || !strings.Contains(err.Error(), s.file) {
		t.Fatalf("unwritable counts file: err = %v", err)
	}
}

// TestHelperProcess is the child of TestProcessDiesBySIGKILL.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("CRASHPOINT_HELPER") != "1" {
		t.Skip("child process of TestProcessDiesBySIGKILL")
	}
	defer os.Stdout.WriteString("deferred code ran\n")
	for i := 0; i < 3; i++ {
		os.Stdout.WriteString("hit\n")
		Hit("site")
	}
	if err := WriteCounts(); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("survived\n")
}

func TestProcessDiesBySIGKILL(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("checks a Unix signal")
	}
	counts := filepath.Join(t.TempDir(), "counts.json")
	for _, tc := range []struct {
		crash string
		hits  int // lines "hit" printed before the kill; 0 = no kill
	}{
		{"site:2", 2},
		{"*:1", 1},
		{"other:1", 0},
		{"", 0},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.v")
		cmd.Env = append(os.Environ(), "CRASHPOINT_HELPER=1", EnvCrash+"="+tc.crash, EnvCounts+"="+counts)
		out, err := cmd.Output()
		hits := strings.Count(string(out), "hit\n")
		if tc.hits == 0 {
			if err != nil || hits != 3 || !strings.Contains(string(out), "survived") {
				t.Errorf("%q: want a normal exit after 3 hits; got %v:\n%s", tc.crash, err, out)
			}
			data, err := os.ReadFile(counts)
			if err != nil || strings.TrimSpace(string(data)) != `{"site":3}` {
				t.Errorf("%q: counts file %q (%v)", tc.crash, data, err)
			}
			continue
		}
		ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Errorf("%q: child exited with %v, want killed by SIGKILL", tc.crash, cmd.ProcessState)
		}
		if hits != tc.hits || strings.Contains(string(out), "deferred") || strings.Contains(string(out), "survived") {
			t.Errorf("%q: want death at hit %d with no deferred code; output:\n%s", tc.crash, tc.hits, out)
		}
	}
}

func TestMalformedVariablePanicsAtStart(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "CRASHPOINT_HELPER=1", EnvCrash+"=site")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "want SITE:N") || strings.Contains(string(out), "hit\n") {
		t.Fatalf("malformed %s: %v\n%s", EnvCrash, err, out)
	}
}

func BenchmarkHitInactive(b *testing.B) {
	if active.Load() {
		b.Skip(EnvCrash + " or " + EnvCounts + " is set")
	}
	for b.Loop() {
		Hit("bench")
	}
}
