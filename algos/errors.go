package algos

import "errors"

var (
	// ErrFormat is returned when decoding a trajectory, checkpoint or state
	// blob that is truncated, has trailing bytes, a wrong magic or values that
	// violate the format's invariants.
	ErrFormat = errors.New("algos: malformed encoding")
	// ErrVersion is returned when decoding a blob whose version this build
	// does not read.
	ErrVersion = errors.New("algos: unsupported encoding version")
	// ErrBudget is returned by Run when the budget is not positive.
	ErrBudget = errors.New("algos: invalid budget")
	// ErrSchedule is returned by Run when a schedule field is negative.
	ErrSchedule = errors.New("algos: invalid schedule")
	// ErrSamples is returned by Run when a Method reports a negative number of
	// samples for an iteration.
	ErrSamples = errors.New("algos: method reported negative samples")
)
