package pipeline

import (
	"errors"
	"fmt"
)

var (
	// ErrTaskFailed is returned by Run when at least one task failed.
	ErrTaskFailed = errors.New("pipeline: a task failed")
	// ErrInterrupted is returned by Run when its context was cancelled.
	ErrInterrupted = errors.New("pipeline: interrupted")
	// ErrWriteFailed is returned (wrapped with the cause, which names the
	// file and the OS error) by Run when writing to the store or the event
	// log failed, e.g. on a full disk. Run stopped early; everything written
	// before the failure is kept and a later run resumes from it.
	ErrWriteFailed = errors.New("pipeline: write failed")
	// ErrBadManifest is returned (wrapped) when a stored output manifest is
	// not in the canonical form the engine writes; the output is then
	// treated as missing and recomputed.
	ErrBadManifest = errors.New("pipeline: malformed output manifest")
	// ErrUnknownTask is returned when a task path is not in the plan.
	ErrUnknownTask = errors.New("pipeline: unknown task")
	// ErrNotRecorded is returned by audit, replay and verify when the event
	// log holds no finished run of what they were asked about.
	ErrNotRecorded = errors.New("pipeline: not recorded")
	// ErrIdentityChanged is returned by Replay when the task's identity
	// (code, parameters, platform) differs from the recorded run's, so a
	// re-execution would not be the same action.
	ErrIdentityChanged = errors.New("pipeline: identity changed since the recorded run")
)

// notRecorded is an ErrNotRecorded with its own message.
type notRecorded struct{ msg string }

func (e *notRecorded) Error() string { return e.msg }
func (e *notRecorded) Unwrap() error { return ErrNotRecorded }

func notRecordedf(format string, args ...any) error {
	return &notRecorded{msg: fmt.Sprintf(format, args...)}
}
