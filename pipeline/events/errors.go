package events

import "errors"

var (
	// ErrLocked is returned by Open when another process (or another Log
	// in this process) holds the file lock for longer than Options.Timeout.
	ErrLocked = errors.New("events: log is locked")

	// ErrCorruptLog is returned by Open when the file is not a complete
	// event log (not a bbolt database, empty, truncated, missing buckets),
	// and by reads when a stored record cannot be decoded or bbolt fails on
	// a damaged page. The file is never modified in response.
	ErrCorruptLog = errors.New("events: corrupt log")

	// ErrSchema is returned by Open when the log was written with a
	// different schema version than this binary reads.
	ErrSchema = errors.New("events: schema version mismatch")

	// ErrReadOnly is returned by BeginRun and by a Writer's Flush, Close
	// and Err when the log was opened with Options.ReadOnly.
	ErrReadOnly = errors.New("events: log is read-only")

	// ErrInvalidEvent is returned by BeginRun for data that is not valid
	// JSON, and is the value Writer.Append panics with (wrapped) for an
	// event it cannot store: an unknown Type, an "iter" event without Iter
	// or with a negative iteration, Iter on another type, or invalid Data.
	ErrInvalidEvent = errors.New("events: invalid event")

	// ErrWriterClosed is returned by a Writer's Err, Flush and Close after
	// Append was called on the closed Writer (the event was dropped).
	ErrWriterClosed = errors.New("events: writer is closed")

	// ErrCorruptAttempt is returned by ReadAttempt when an attempt file is
	// damaged rather than cut short: a missing or bad magic line or header,
	// a frame whose digest does not match with more than a torn tail after
	// it, data after the end frame, an end frame whose count does not match,
	// or an event that does not decode, is invalid or is of another task.
	ErrCorruptAttempt = errors.New("events: corrupt attempt file")
)

// openError is an error from Open whose message is written for the person
// running the pipeline; it wraps a sentinel and the underlying cause.
type openError struct {
	msg   string
	kind  error
	cause error
}

func (e *openError) Error() string { return e.msg }

func (e *openError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}
