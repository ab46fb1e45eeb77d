package algos

import "errors"

var (
	// ErrBudget is returned by Run when the budget is not positive.
	ErrBudget = errors.New("algos: invalid budget")
	// ErrSchedule is returned by Run when a schedule field is negative.
	ErrSchedule = errors.New("algos: invalid schedule")
	// ErrSamples is returned by Run when a Method reports a negative number of
	// samples for an iteration.
	ErrSamples = errors.New("algos: method reported negative samples")
)
