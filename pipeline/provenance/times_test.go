package provenance

import (
	"fmt"
	"testing"

	"zorepro/pipeline/events"
)

// A killed run counts up to its last timed event; a resumed run up to its
// end state; another action's events do not count.
func TestActionTimeSumsEveryRunOfTheAction(t *testing.T) {
	st := func(run uint64, state string, at int64, act string) events.Event {
		return events.Event{Type: events.TypeState, Run: run, State: state, Time: at, Action: act}
	}
	evs := []events.Event{
		st(1, events.StateStarted, 10, "old"), st(1, events.StateDone, 1000, "old"),
		st(2, events.StateStarted, 2000, "a"),
		{Type: events.TypeCheckpoint, Run: 2, Time: 2005, Action: "a"}, // then SIGKILL
		st(3, events.StateStarted, 3000, "a"), st(3, events.StateResumed, 3001, "a"),
		{Type: events.TypeCheckpoint, Run: 3, Time: 3010, Action: "a"},
		st(3, events.StateInterrupted, 3020, "a"),
		st(4, events.StateStarted, 4000, "a"), st(4, events.StateDone, 4030, "a"),
		st(5, events.StateCached, 5000, "a"),
	}
	d, finished, runs := actionTime(evs, "a")
	if d != 5+20+30 || !finished || fmt.Sprint(runs) != "[2 3 4]" {
		t.Fatalf("actionTime = %d, %v, runs %v; want 55, true, [2 3 4]", d, finished, runs)
	}
	if d, finished, _ := actionTime(evs[:4], "a"); d != 5 || finished {
		t.Fatalf("unfinished: %d, %v; want 5, false", d, finished)
	}
}
