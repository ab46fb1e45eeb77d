package slurm

import "errors"

var (
	// ErrUnavailable is returned by Open when Slurm cannot be used: a
	// command is missing, the controller does not answer or the partition
	// does not exist.
	ErrUnavailable = errors.New("slurm: unavailable")

	// ErrSubmit is returned by Dispatch when sbatch refused a job array.
	ErrSubmit = errors.New("slurm: submission failed")

	// ErrLost is returned by Dispatch when the controller stopped
	// answering for longer than Config.LostAfter while the attempt ran.
	ErrLost = errors.New("slurm: controller lost")
)
