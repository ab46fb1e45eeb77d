package events

import (
	"encoding/json"
	"fmt"

	"zorepro/pipeline/task"
)

// Type is the kind of an event.
type Type string

// Event types.
const (
	TypeRun        Type = "run"        // a run started, finished, failed or was interrupted
	TypeState      Type = "state"      // a task changed state
	TypeTranscript Type = "transcript" // the identity transcript of a task's action
	TypeStreams    Type = "streams"    // random stream families used by a task (in Data)
	TypeIter       Type = "iter"       // one training iteration (in Iter)
	TypeCheckpoint Type = "checkpoint" // a resumable checkpoint was stored
	TypeNote       Type = "note"       // free-form annotation
)

// Task states (Event.State of a "state" event).
const (
	StateStarted     = "started"
	StateCached      = "cached"
	StateDone        = "done"
	StateFailed      = "failed"
	StateSkipped     = "skipped"
	StateInterrupted = "interrupted"
	StateResumed     = "resumed"
)

// Run states (Event.State of a "run" event).
const (
	RunStarted     = "started"
	RunFinished    = "finished"
	RunInterrupted = "interrupted"
	RunFailed      = "failed"
)

// Event is one log entry. Which fields are meaningful depends on Type.
type Event struct {
	Seq        uint64          `json:"seq"` // assigned at commit, increasing
	Type       Type            `json:"type"`
	Run        uint64          `json:"run,omitempty"`
	Task       string          `json:"task,omitempty"`
	Time       int64           `json:"time,omitempty"`  // unix nanoseconds; metadata only
	State      string          `json:"state,omitempty"` // State* for "state", Run* for "run"
	Action     string          `json:"action,omitempty"`
	Output     string          `json:"output,omitempty"`
	Transcript string          `json:"transcript,omitempty"`
	Checkpoint *Checkpoint     `json:"checkpoint,omitempty"`
	Error      string          `json:"error,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"` // free-form JSON
	Iter       *task.Iter      `json:"iter,omitempty"`
	// Iters is a block of iterations of one task in one run, in strictly
	// increasing order; an "iter" event carries either Iter or Iters.
	Iters []task.Iter `json:"iters,omitempty"`
}

// Checkpoint locates a stored checkpoint.
type Checkpoint struct {
	Content   string `json:"content"` // output ID text of the checkpoint bytes
	Iteration int64  `json:"iteration"`
}

// ActionRecord says which run of which task produced an action's output
// (the "actions" index).
type ActionRecord struct {
	Task   string `json:"task"`
	Run    uint64 `json:"run"`
	Output string `json:"output"`
	Seq    uint64 `json:"seq"`
}

// CheckpointRecord is the latest checkpoint of an action (the
// "checkpoints" index).
type CheckpointRecord struct {
	Task      string `json:"task"`
	Run       uint64 `json:"run"`
	Content   string `json:"content"`
	Iteration int64  `json:"iteration"`
	Seq       uint64 `json:"seq"`
}

// TranscriptRecord is one identity transcript of a task (the
// "transcripts" index keeps the latest two).
type TranscriptRecord struct {
	Task       string `json:"task"`
	Run        uint64 `json:"run"`
	Action     string `json:"action"`
	Transcript string `json:"transcript"`
	Seq        uint64 `json:"seq"`
}

// StateRecord is the last state of a task (the "laststate" index).
type StateRecord struct {
	Task   string `json:"task"`
	Run    uint64 `json:"run"`
	State  string `json:"state"`
	Action string `json:"action,omitempty"`
	Output string `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
	Seq    uint64 `json:"seq"`
	Time   int64  `json:"time,omitempty"`
}

// transcriptPair is the value of the "transcripts" index.
type transcriptPair struct {
	Latest   TranscriptRecord `json:"latest"`
	Previous TranscriptRecord `json:"previous"`
}

// validate reports why ev cannot be stored, or nil.
func validate(ev *Event) error {
	switch ev.Type {
	case TypeRun, TypeState, TypeTranscript, TypeStreams, TypeCheckpoint, TypeNote:
		if ev.Iter != nil || ev.Iters != nil {
			return fmt.Errorf("%w: %q event with Iter set (only %q events carry Iter)", ErrInvalidEvent, ev.Type, TypeIter)
		}
	case TypeIter:
		if (ev.Iter == nil) == (len(ev.Iters) == 0) {
			return fmt.Errorf("%w: %q event needs exactly one of Iter and Iters (task %q, run %d)", ErrInvalidEvent, ev.Type, ev.Task, ev.Run)
		}
		if ev.Iter != nil && ev.Iter.Iteration < 0 {
			return fmt.Errorf("%w: %q event with negative iteration %d (task %q, run %d)", ErrInvalidEvent, ev.Type, ev.Iter.Iteration, ev.Task, ev.Run)
		}
		for i, it := range ev.Iters {
			if it.Iteration < 0 || (i > 0 && it.Iteration <= ev.Iters[i-1].Iteration) {
				return fmt.Errorf("%w: %q block with iteration %d at position %d is negative or out of order (task %q, run %d)", ErrInvalidEvent, ev.Type, it.Iteration, i, ev.Task, ev.Run)
			}
		}
	default:
		return fmt.Errorf("%w: unknown type %q (task %q)", ErrInvalidEvent, ev.Type, ev.Task)
	}
	if len(ev.Data) > 0 && !json.Valid(ev.Data) {
		return fmt.Errorf("%w: %q event data is not valid JSON (task %q)", ErrInvalidEvent, ev.Type, ev.Task)
	}
	return nil
}
