package pipeline

import (
	"errors"
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
	// ErrRefused is returned (wrapped, naming the node and the transcript
	// lines that differ) by Work when the worker's action ID for its task
	// differs from the coordinator's: another binary, dag file, profile or
	// native library (e.g. a node with another OpenBLAS) would compute
	// other bits than the coordinator's identity promises.
	ErrRefused = errors.New("worker refused the task")
)
