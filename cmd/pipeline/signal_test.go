package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startPipeline starts the binary in dir with stderr captured.
func startPipeline(t *testing.T, bin, dir string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, &stderr
}

// waitFor polls until s's content contains want.
func waitFor(t *testing.T, s *syncBuffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if strings.Contains(s.String(), want) {
			return
		}
	}
	t.Fatalf("no %q within 2 minutes:\n%s", want, s.String())
}

// A task inside one long step that cannot notice the signal (an
// eigendecomposition at d = 1000) does not hold the run: after the grace
// period it is recorded as interrupted and the run exits 130 (issue 27: the
// run waited for the step, about 20 s). A rerun then completes it.
func TestSIGINTDoesNotWaitForALongStep(t *testing.T) {
	bin, dir := binary(t), t.TempDir()
	dagPath, _ := filepath.Abs("testdata/generate1000.yaml")
	args := []string{"run", "--dag", dagPath, "--store", "store", "--figures", "fig"}
	cmd, stderr := startPipeline(t, bin, dir, args...)
	waitFor(t, stderr, "start    generate/linreg/d=1000/seed=1")
	sent := time.Now()
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	t.Logf("stopped %v after SIGINT", time.Since(sent).Round(time.Millisecond))
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d, want 130\n%s", code, stderr.String())
	}
	out, _ := cli(t, bin, dir, "status", "--dag", dagPath, "--store", "store")
	if !strings.Contains(out, "interrupted generate/linreg/d=1000/seed=1") {
		t.Fatalf("status after the interrupt (the step takes seconds; its task must not be done):\n%s", out)
	}
	if res, _ := pipelineRun(t, bin, dir, args[1:]...); len(res.Executed) != 1 {
		t.Fatalf("the rerun executed %v", res.Executed)
	}
}

// Planning writes nothing, so a signal stops it at once (issue 27: a large
// dag's planning ignored SIGINT and SIGTERM until it finished).
func TestSignalStopsPlanning(t *testing.T) {
	bin, root, dir := binary(t), repoRoot(t), t.TempDir()
	// The repository's dag with 60 times the evaluation seeds: about
	// 180,000 tasks, seconds of planning.
	b, err := os.ReadFile(filepath.Join(root, "dag.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, list := range []string{"eval", "mujoco_eval", "lqr_eval"} {
		i := strings.Index(text, "\n  "+list+": [")
		j := strings.Index(text[i:], "]") + i
		var seeds []string
		for k := 0; k < 60; k++ {
			for _, s := range strings.Split(text[i+len(list)+6:j], ",") {
				var n int
				fmt.Sscan(strings.TrimSpace(s), &n)
				seeds = append(seeds, fmt.Sprint(n+100000000*k))
			}
		}
		text = text[:i+len(list)+6] + strings.Join(seeds, ", ") + text[j:]
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		cmd, stderr := startPipeline(t, bin, root, "run", "--dag", big, "--store", filepath.Join(dir, "store"), "--dry-run")
		time.Sleep(300 * time.Millisecond)
		sent := time.Now()
		cmd.Process.Signal(sig)
		cmd.Wait()
		t.Logf("stopped %v after the signal", time.Since(sent).Round(time.Millisecond))
		if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || !strings.Contains(stderr.String(), "interrupted while planning; nothing was recorded") {
			t.Fatalf("exit %d, want 130 and the message\n%s", code, stderr.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "store")); !os.IsNotExist(err) {
		t.Errorf("planning that was interrupted left a store: %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe for a process writing while the test
// reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// A run says what it is about to do before it starts: the profile (the
// default one named as such, with the quick one offered), how many tasks
// it would run, the predicted wall time, and that Ctrl-C stops it and a
// rerun resumes (issue 27: `run` without --profile started most of a day
// of work without a word).
func TestRunSaysWhatItWillDo(t *testing.T) {
	bin, dir := binary(t), t.TempDir()
	dagPath, _ := filepath.Abs("testdata/resume.yaml")
	res, stderr := pipelineRun(t, bin, dir, "--dag", dagPath, "--store", "store", "--figures", "fig")
	n := len(res.Executed)
	for _, want := range []string{
		fmt.Sprintf("profile paper (the default: the paper at full scale; --profile quick runs every figure at reduced scale in minutes): %d tasks, %d to run\n", n, n),
		// Nothing is recorded yet, so the training tasks have no rate: the
		// prediction is a lower bound and says so (a fresh store's header
		// predicted the paper profile's 6h33m without a word about the
		// 6,488 tasks it could not time).
		"predicted: at least ~", " on 2 workers",
		"the times are lower bounds: 2 tasks with a sample budget (train/linreg) have no recorded rate yet; a --profile smoke run into this store",
		"Ctrl-C stops the run with its progress saved; the same command resumes it.",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the run's stderr lacks %q:\n%.1500s", want, stderr)
		}
	}
	_, stderr = pipelineRun(t, bin, dir, "--dag", dagPath, "--store", "store", "--figures", "fig", "--profile", "paper")
	if want := fmt.Sprintf("profile paper: all %d tasks are recorded; nothing to run\n", n); !strings.HasPrefix(stderr, want) {
		t.Errorf("a second run's stderr does not start with %q:\n%.1500s", want, stderr)
	}
	// A third seed: its training task takes the recorded rate of its
	// group, so the prediction is no longer a bound.
	src, err := os.ReadFile(dagPath)
	if err != nil {
		t.Fatal(err)
	}
	more := filepath.Join(dir, "more-seeds.yaml")
	if err := os.WriteFile(more, bytes.Replace(src, []byte("eval: [5488, 7151]"), []byte("eval: [5488, 7151, 283]"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr = pipelineRun(t, bin, dir, "--dag", more, "--store", "store", "--figures", "fig")
	if !strings.Contains(stderr, "predicted: ~") || strings.Contains(stderr, "lower bound") {
		t.Errorf("with every training task's rate recorded, the run's stderr should predict without a bound:\n%.1500s", stderr)
	}
}
