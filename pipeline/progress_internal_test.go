package pipeline

import (
	"strings"
	"testing"
	"time"
)

// The time left is the work left at the pace of the work done, each task
// weighed by its predicted time. Known answers worked by hand: a (10 s
// predicted), b (30 s), c (none: the mean, 20 s), d (20 s, cached): 80 s
// of work, 60 s once d is found cached. a done 5 s into the run: 10 s of
// work in 5 s, so 50 s of work left take 25 s. Then b half way by its
// samples: 25 s done in 10 s, 35 s left take 14 s.
func TestProgressTimeLeftKnownAnswers(t *testing.T) {
	p := newProgress(nil, false, 4)
	p.weigh([]string{"a", "b", "c", "d"}, map[string]time.Duration{"a": 10 * time.Second, "b": 30 * time.Second, "d": 20 * time.Second})
	if p.totalW != 80 {
		t.Fatalf("total work %v, want 80", p.totalW)
	}
	if _, ok := p.left(p.start.Add(time.Second)); ok {
		t.Error("a time left before any work is done")
	}
	p.event("cached", "d", nil)
	p.event("start", "a", nil)
	p.event("start", "b", nil)
	p.event("done", "a", nil)
	if d, ok := p.left(p.start.Add(5 * time.Second)); !ok || d != 25*time.Second {
		t.Errorf("after a: %v (%v), want 25s", d, ok)
	}
	p.task("b", 50, 100)
	if d, ok := p.left(p.start.Add(10 * time.Second)); !ok || d != 14*time.Second {
		t.Errorf("with b half way: %v (%v), want 14s", d, ok)
	}
	p.event("skipped", "c", nil) // no work: out of the total
	if d, ok := p.left(p.start.Add(10 * time.Second)); !ok || d != 6*time.Second {
		t.Errorf("c skipped: %v (%v), want 6s (the 15 s of b left at 10 s per 25 s of work)", d, ok)
	}
}

// A resumed run finds most of its tasks cached at once: the time left is
// that of the tasks it executes, not the count's (90 of 100 finished in
// the first seconds read as a few seconds left).
func TestProgressTimeLeftOfAResumedRun(t *testing.T) {
	const n = 100
	paths := make([]string, n)
	for i := range paths {
		paths[i] = string(rune('A' + i))
	}
	p := newProgress(nil, false, n)
	p.weigh(paths, nil) // no predictions: equal weights
	for _, path := range paths[:90] {
		p.event("cached", path, nil)
	}
	p.event("start", paths[90], nil)
	p.event("done", paths[90], nil)
	if d, ok := p.left(p.start.Add(10 * time.Second)); !ok || d != 90*time.Second {
		t.Errorf("1 of 10 executed in 10 s: %v (%v), want 1m30s for the other 9", d, ok)
	}
}

// In a pipe, a run says every leftEvery how much is left, after a task's
// line; a terminal shows it in its bar.
func TestProgressTimeLeftLines(t *testing.T) {
	var b strings.Builder
	p := newProgress(&b, false, 3)
	p.weigh([]string{"a", "b", "c"}, map[string]time.Duration{"a": time.Second, "b": time.Second, "c": time.Second})
	p.event("start", "a", nil)
	p.event("done", "a", nil)
	if strings.Contains(b.String(), "left") {
		t.Errorf("a time-left line before %s:\n%s", leftEvery, b.String())
	}
	p.lastLine = p.lastLine.Add(-leftEvery)
	p.event("start", "b", nil)
	p.event("done", "b", nil)
	if !strings.Contains(b.String(), "[2/3] 1 task left: about ") || !strings.Contains(b.String(), "(2 executed in ") {
		t.Errorf("no time-left line after %s:\n%s", leftEvery, b.String())
	}
	var term strings.Builder
	p = newProgress(&term, true, 3)
	p.weigh([]string{"a", "b", "c"}, nil)
	p.event("start", "a", nil)
	p.event("done", "a", nil)
	bar := term.String()[strings.LastIndex(term.String(), "\r"):]
	if strings.Contains(bar, "ETA ?") || !strings.Contains(bar, "1/3 tasks  ETA ") {
		t.Errorf("the bar after a task executed: %q", bar)
	}
}
