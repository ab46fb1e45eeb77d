package pipeline

import "errors"

var (
	// ErrTaskFailed is returned by Run when at least one task failed.
	ErrTaskFailed = errors.New("pipeline: a task failed")
	// ErrInterrupted is returned by Run when its context was cancelled.
	ErrInterrupted = errors.New("pipeline: interrupted")
	// ErrUnknownTask is returned when a task path is not in the plan.
	ErrUnknownTask = errors.New("pipeline: unknown task")
)
