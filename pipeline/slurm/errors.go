package slurm

import "errors"

var (
	// ErrUnavailable is returned by Open when Slurm cannot be used: a
	// command is missing, the controller does not answer or the partition
	// does not exist.
	ErrUnavailable = errors.New("slurm: unavailable")

	// ErrSubmit is returned by Dispatch when sbatch refused the jobs that
	// would run the attempt for a reason that retrying does not cure (an
	// unknown account or QOS, a bad argument), or kept failing for longer
	// than Config.LostAfter.
	ErrSubmit = errors.New("slurm: submission failed")

	// ErrLost is returned by Dispatch when the controller stopped
	// answering for longer than Config.LostAfter and the attempt showed no
	// sign of life meanwhile; a job that still runs it is asked to stop.
	ErrLost = errors.New("slurm: controller lost")

	// ErrStalled is returned by Dispatch when the run made no progress for
	// Config.StallAfter (no job started, no attempt was taken, ended or
	// wrote), or when its jobs can never start (a pending reason such as
	// PartitionConfig): the message gives the jobs' states and reasons.
	ErrStalled = errors.New("slurm: no progress")
)
