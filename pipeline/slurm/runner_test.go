package slurm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"zorepro/pipeline"
)

// fakeWorker records the specs it runs; a spec's name chooses its fate.
type fakeWorker struct {
	mu   sync.Mutex
	ran  []string
	runs chan string // receives each spec as it starts (nil: none)
}

func (w *fakeWorker) Work(ctx context.Context, spec string) error {
	w.mu.Lock()
	w.ran = append(w.ran, spec)
	w.mu.Unlock()
	if w.runs != nil {
		w.runs <- spec
	}
	switch {
	case strings.HasPrefix(spec, "fail"):
		return errors.New("deliberate failure")
	case strings.HasPrefix(spec, "refuse"):
		return fmt.Errorf("%w: task t has action a on node7", pipeline.ErrRefused)
	case strings.HasPrefix(spec, "block"):
		<-ctx.Done()
		return fmt.Errorf("%w", pipeline.ErrInterrupted)
	}
	return nil
}

func newBuild(t *testing.T) buildDir {
	t.Helper()
	b := buildDir(filepath.Join(t.TempDir(), "runs", "b"))
	if err := b.make(); err != nil {
		t.Fatal(err)
	}
	return b
}

func mustMarker(t *testing.T, b buildDir, ticket string) marker {
	t.Helper()
	m, ok, err := b.readMarker(ticket)
	if err != nil || !ok {
		t.Fatalf("no end marker for %s (%v)", ticket, err)
	}
	return m
}

// A runner takes the queue's tickets oldest first, runs each and records
// its end (completed, failed with the error, refused), releases its claims
// and exits once idle.
func TestServeRunsTheQueueInOrder(t *testing.T) {
	b := newBuild(t)
	tickets := map[string]string{"0003-c": "refuse-c", "0001-a": "ok-a", "0002-b": "fail-b"}
	for tk, spec := range tickets {
		if err := b.enqueue(tk, spec); err != nil {
			t.Fatal(err)
		}
	}
	w := &fakeWorker{}
	if err := Serve(context.Background(), RunnerConfig{Build: string(b), ID: "7_0", Idle: 50 * time.Millisecond}, w); err != nil {
		t.Fatal(err)
	}
	if want := []string{"ok-a", "fail-b", "refuse-c"}; !slices.Equal(w.ran, want) {
		t.Fatalf("ran %v, want %v", w.ran, want)
	}
	for tk, want := range map[string]string{"0001-a": stateCompleted, "0002-b": stateFailed, "0003-c": pipeline.Refused} {
		m := mustMarker(t, b, tk)
		if m.State != want || m.Runner != "7_0" || m.Node == "" || m.Ended < m.Began {
			t.Errorf("%s: marker %+v, want state %s from runner 7_0", tk, m, want)
		}
	}
	if m := mustMarker(t, b, "0002-b"); m.Detail != "deliberate failure" {
		t.Errorf("failed attempt's detail %q", m.Detail)
	}
	if left := names(b.claimed("7_0")); len(left) != 0 || len(names(b.queue())) != 0 {
		t.Errorf("claims %v and queue %v left", left, names(b.queue()))
	}
}

// A cancel request stops the attempt in hand (CANCELLED); one present
// before the attempt starts keeps it from starting; a signal to the
// runner (its context) interrupts the attempt in hand and ends the runner.
func TestServeCancelAndSignal(t *testing.T) {
	b := newBuild(t)
	b.enqueue("0001-a", "block-a")
	publish(b.cancel("0002-b"), nil)
	b.enqueue("0002-b", "ok-b")
	w := &fakeWorker{runs: make(chan string, 4)}
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), RunnerConfig{Build: string(b), ID: "7_1", Idle: 100 * time.Millisecond}, w)
	}()
	<-w.runs
	publish(b.cancel("0001-a"), nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if m := mustMarker(t, b, "0001-a"); m.State != stateCancelled {
		t.Errorf("cancelled attempt ended %s", m.State)
	}
	if m := mustMarker(t, b, "0002-b"); m.State != stateCancelled || len(w.ran) != 1 {
		t.Errorf("attempt cancelled before it started: %s, ran %v", m.State, w.ran)
	}

	b.enqueue("0003-c", "block-c")
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- Serve(ctx, RunnerConfig{Build: string(b), ID: "7_2", Idle: time.Minute}, w) }()
	<-w.runs
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("signalled runner returned %v", err)
	}
	if m := mustMarker(t, b, "0003-c"); m.State != stateInterrupted {
		t.Errorf("signalled attempt ended %s", m.State)
	}
}

// A runner that Slurm requeued finds its claims of before: it ends them as
// REQUEUED (the coordinator resubmits them as new attempts) and never runs
// them again itself, so that a task never has two live attempts.
func TestServeRequeuedRunnerEndsItsOldClaims(t *testing.T) {
	b := newBuild(t)
	os.MkdirAll(b.claimed("9_0"), 0o755)
	os.WriteFile(filepath.Join(b.claimed("9_0"), "0001-a"), []byte("ok-a"), 0o644)
	w := &fakeWorker{}
	if err := Serve(context.Background(), RunnerConfig{Build: string(b), ID: "9_0", Idle: 20 * time.Millisecond}, w); err != nil {
		t.Fatal(err)
	}
	if m := mustMarker(t, b, "0001-a"); m.State != stateRequeued {
		t.Errorf("old claim ended %s, want %s", m.State, stateRequeued)
	}
	if len(w.ran) != 0 {
		t.Errorf("ran %v", w.ran)
	}
}

// Two runners never take the same ticket.
func TestClaimIsExclusive(t *testing.T) {
	b := newBuild(t)
	const n = 200
	for i := range n {
		b.enqueue(fmt.Sprintf("%04d", i), fmt.Sprintf("ok-%d", i))
	}
	var wg sync.WaitGroup
	got := make([][]string, 4)
	for r := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := b.claimed(fmt.Sprint(r))
			os.MkdirAll(dir, 0o755)
			for {
				tk, _ := claim(b, dir)
				if tk == "" {
					return
				}
				got[r] = append(got[r], tk)
			}
		}()
	}
	wg.Wait()
	var all []string
	for _, g := range got {
		all = append(all, g...)
	}
	slices.Sort(all)
	if len(all) != n || len(slices.Compact(all)) != n {
		t.Fatalf("%d tickets claimed (%d distinct), want %d once each", len(all), len(slices.Compact(slices.Clone(all))), n)
	}
}

// Failures that pass by themselves are retried; others fail at once.
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		msg              string
		transient, limit bool
	}{
		{"sbatch: error: Batch job submission failed: Socket timed out on send/recv operation", true, false},
		{"sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)", true, false},
		{"squeue: error: slurm_load_jobs error: Unable to contact slurm controller (connect failure)", true, false},
		{"sbatch: error: QOSMaxSubmitJobPerUserLimit", true, true},
		{"sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)", true, true},
		{"sbatch: error: Batch job submission failed: Invalid partition name specified", false, false},
		{"sbatch: error: Batch job submission failed: Invalid qos specification", false, false},
		{"sbatch: error: Batch job submission failed: Requested node configuration is not available", false, false},
		{"sbatch: unrecognized option '--bogus'", false, false},
	} {
		e := classify("sbatch", c.msg, false)
		if e.transient != c.transient || e.limit != c.limit {
			t.Errorf("%q: transient %v, limit %v; want %v, %v", c.msg, e.transient, e.limit, c.transient, c.limit)
		}
	}
}

// A frozen copy is named by its content and keeps its mode; the same
// content is copied once; pruning keeps what a build names.
func TestFreeze(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "bin")
	os.WriteFile(src, []byte("#!/bin/sh\necho one\n"), 0o755)
	p1, s1, err := freeze(src, filepath.Join(dir, "copies"), "pipeline-", "", 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p1); err != nil || fi.Mode().Perm() != 0o755 || !strings.HasSuffix(p1, "pipeline-"+s1) {
		t.Fatalf("copy %s: %v %v", p1, fi, err)
	}
	os.WriteFile(src, []byte("#!/bin/sh\necho two\n"), 0o755) // rebuilt while a run lasts
	p2, s2, err := freeze(src, filepath.Join(dir, "copies"), "pipeline-", "", 0o755)
	if err != nil || s2 == s1 || p2 == p1 {
		t.Fatalf("second copy %s (%s), first %s: %v", p2, s2, p1, err)
	}
	if data, _ := os.ReadFile(p1); string(data) != "#!/bin/sh\necho one\n" {
		t.Errorf("the first copy changed: %q", data)
	}
	pruneCopies(filepath.Join(dir, "copies"), []string{s2 + "-dagsum-c1"})
	if _, err := os.Stat(p1); err == nil {
		t.Error("an unused copy was kept")
	}
	if _, err := os.Stat(p2); err != nil {
		t.Error("the used copy was removed")
	}
}
