package provenance

import (
	"errors"
	"fmt"
)

var (
	// ErrUnknownTask is returned when a task path is not in the plan.
	ErrUnknownTask = errors.New("provenance: unknown task")
	// ErrNotRecorded is returned by audit, replay and verify when the event
	// log holds no finished run of what they were asked about.
	ErrNotRecorded = errors.New("provenance: not recorded")
	// ErrIdentityChanged is returned by Replay when the task's identity
	// (code, parameters, platform) differs from the recorded run's, so a
	// re-execution would not be the same action.
	ErrIdentityChanged = errors.New("provenance: identity changed since the recorded run")
	// ErrDamaged is returned by every reader of a recorded output (Checked,
	// ReadOutput, FindFigure, Replay) when its manifest or one of its
	// entries is missing or corrupt in the store; the error names the
	// entry and also wraps store.ErrCorrupt or store.ErrNotFound.
	ErrDamaged = errors.New("provenance: recorded output damaged")
)

// notRecorded is an ErrNotRecorded with its own message.
type notRecorded struct{ msg string }

func (e *notRecorded) Error() string { return e.msg }
func (e *notRecorded) Unwrap() error { return ErrNotRecorded }

func notRecordedf(format string, args ...any) error {
	return &notRecorded{msg: fmt.Sprintf(format, args...)}
}
