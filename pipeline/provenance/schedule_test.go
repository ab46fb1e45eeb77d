package provenance_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"zorepro/pipeline/provenance"
)

// The schedule gives each stage's tasks that would run, and counts those
// whose identity changed since their latest recorded run (a code edit),
// not those that never finished (an interrupted run resumes them under
// the same identity): serve's overview says "1 changed since it ran" of
// a plot whose code a new build changed.
func TestScheduleStagesCountChangedTasks(t *testing.T) {
	h := newDrift(t)
	if got := stagesLeft(t, h); len(got) != 2 || got[0].Stage != "a" || got[0].Tasks != 1 || got[1].Stage != "w" || got[1].Tasks != 3 || got[0].Changed+got[1].Changed != 0 {
		t.Errorf("a fresh store: stages %+v, want a (1 task) and w (3), none changed", got)
	}
	h.interruptedThenResumed().Events.Close()
	if got := stagesLeft(t, h); len(got) != 0 {
		t.Errorf("after a complete run: stages %+v, want none", got)
	}
	h.code.Bump("strings") // the drift kind's code
	if got := stagesLeft(t, h); len(got) != 1 || got[0].Stage != "w" || got[0].Tasks != 3 || got[0].Changed != 3 {
		t.Errorf("after an edit of w's code: stages %+v, want w's 3 tasks, all changed", got)
	}
	// Each of them has the time it took before (serve's running rows):
	// the stage's time left is theirs, summed.
	s := schedule(t, h)
	if len(s.Stages) != 1 || s.Stages[0].Timed != 3 || len(s.Times) != 3 {
		t.Fatalf("after an edit of w's code: stages %+v, task times %v; want w's 3 tasks timed", s.Stages, s.Times)
	}
	var sum time.Duration
	for path, d := range s.Times {
		if !strings.HasPrefix(path, "w/") || d <= 0 {
			t.Errorf("task time %s %v: want one of w's tasks, with a time", path, d)
		}
		sum += d
	}
	if diff := sum - s.Stages[0].TaskTime; diff < -time.Second/2 || diff > time.Second/2 {
		t.Errorf("w's task times sum to %v, its time left is %v", sum, s.Stages[0].TaskTime)
	}

	// Tasks an interrupted run left unfinished would run under the same
	// identity: not changed.
	h2 := newDrift(t)
	ctx, cancel := context.WithCancel(context.Background())
	h2.kind.stopAt, h2.kind.cancel = 9, cancel
	if _, err := h2.run(ctx, 0); err == nil {
		t.Fatal("the interrupted run did not stop")
	}
	s = schedule(t, h2)
	if s := s.Stages; len(s) != 1 || s[0].Stage != "w" || s[0].Tasks != 3 || s[0].Changed != 0 {
		t.Errorf("after an interrupted run: stages %+v, want w's 3 tasks, none changed", s)
	}
}

// stagesLeft is the schedule's stages of a dry run on h's store.
func stagesLeft(t *testing.T, h *driftHarness) []provenance.StageLeft {
	t.Helper()
	return schedule(t, h).Stages
}

// schedule is a dry run's schedule on h's store, for 2 workers.
func schedule(t *testing.T, h *driftHarness) *provenance.Schedule {
	t.Helper()
	e := h.engine(time.Hour)
	defer e.Events.Close()
	rec := provenance.New(e)
	xs, err := rec.Explain()
	if err != nil {
		t.Fatal(err)
	}
	s, err := rec.Schedule(xs, 2)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
