package algos

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"zorepro/pipeline/blob"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// MaxPerIteration bounds the counts an iteration allocates by (ARS's
// directions and top-b, the batch sizes, an online learner's chunk): a
// larger value is a parameter error naming its field, where it would
// otherwise fail to allocate (a grid value of 10^14 directions passed
// validation and panicked inside the task, issue 41).
const MaxPerIteration = 1_000_000

// Stat is the result of one iteration.
type Stat struct {
	// Samples is the number of samples this iteration consumed (§3.2), not
	// the running total.
	Samples int64
	// Done reports that the method's own stop rule fired.
	Done bool
	// Metrics are optional training metrics, passed on in the iteration's
	// record.
	Metrics []task.Metric
}

// Method is one optimizer's state on one problem. The driver (Run) owns the
// loop, the budget, recording and checkpoints; a Method only steps.
type Method interface {
	// Step runs iteration it (1-based). It must draw randomness only from
	// streams indexed by it, so that a method restored with UnmarshalState
	// and stepped at it reproduces the same numbers.
	Step(it int64) (Stat, error)
	// Params returns the current parameters as a read-only view; the driver
	// digests them after every iteration.
	Params() []float64
	// Snapshot returns what evaluation needs (e.g. ARS: w ‖ μ ‖ s). It may
	// alias Params(); the driver copies it.
	Snapshot() []float64
	// MarshalState returns everything needed to continue bit-exactly
	// (parameters, optimizer moments, running statistics, ...), but not the
	// configuration, problem or stream source, which the caller supplies
	// when constructing the fresh Method to restore into.
	MarshalState() ([]byte, error)
	// UnmarshalState restores a MarshalState blob.
	UnmarshalState([]byte) error
}

// Recorder receives a run's events and checkpoints. A nil Recorder is
// allowed: Run then records nothing and never checkpoints.
type Recorder interface {
	// Iteration records one event. After a resume, the iterations after the
	// checkpoint are recorded again with identical contents, so a recorder
	// keyed by iteration may simply overwrite.
	Iteration(it task.Iter)
	// CheckpointDue is asked after each iteration (after Iteration).
	CheckpointDue(it int64) bool
	// Checkpoint stores a checkpoint blob; it replaces any earlier one.
	Checkpoint(state []byte) error
	// Resume returns the latest checkpoint, if any.
	Resume() (state []byte, ok bool, err error)
}

// Budget is the sample budget: the run stops after the first iteration at
// which the total samples reach Samples (≥), or exceed it (>) when Strict is
// set (the tuning rule of §3.8). Samples must be positive.
type Budget struct {
	Samples int64
	Strict  bool
}

func (b Budget) reached(samples int64) bool {
	if b.Strict {
		return samples > b.Samples
	}
	return samples >= b.Samples
}

// Schedule chooses the iterations whose Snapshot enters the Trajectory. The
// first iteration and the last one (where the budget or the method's stop
// rule ends the run) are always included. In addition:
//   - Every > 0: every iteration that is a multiple of Every;
//   - PerDecade > 0: every iteration whose sample total crosses one of the
//     thresholds ⌈10^(k/PerDecade)⌉, k = 0, 1, 2, ... (an iteration that
//     crosses several is included once), i.e. about PerDecade points per
//     decade of samples, log-spaced for a log-scaled x axis.
//
// Both may be set (the union is taken); both zero keeps the first and last
// iterations only.
type Schedule struct {
	Every     int64
	PerDecade int
	// EverySamples > 0: every iteration whose sample total crosses a
	// multiple of EverySamples (e.g. "every 10,000 samples", spec §7).
	EverySamples int64
}

// threshold returns ⌈10^(k/PerDecade)⌉.
func (s Schedule) threshold(k int) int64 {
	v := math.Ceil(math.Pow(10, float64(k)/float64(s.PerDecade)))
	if v >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}

// due reports whether iteration it, which took the sample total from prev to
// cur, is snapshotted by the Every/PerDecade rules.
func (s Schedule) due(it, prev, cur int64) bool {
	if s.Every > 0 && it%s.Every == 0 {
		return true
	}
	if s.EverySamples > 0 && cur/s.EverySamples > prev/s.EverySamples {
		return true
	}
	if s.PerDecade <= 0 || cur <= prev {
		return false
	}
	// Smallest k with threshold(k) > prev; start from a safe lower bound.
	k := 0
	if prev > 1 {
		k = max(0, int(float64(s.PerDecade)*math.Log10(float64(prev)))-1)
	}
	for s.threshold(k) <= prev && s.threshold(k) < math.MaxInt64 {
		k++
	}
	return s.threshold(k) <= cur
}

// driverState is the driver's part of a checkpoint.
type driverState struct {
	it, samples int64
	finished    bool
	points      []trajectory.Point
}

const (
	checkpointMagic   = "ZCKP"
	checkpointVersion = 1
)

// encodeCheckpoint: "ZCKP" v1 | iteration | samples | finished | points |
// method state blob.
func encodeCheckpoint(st *driverState, method []byte) []byte {
	e := blob.NewEncoder(checkpointMagic, checkpointVersion)
	e.Int64(st.it)
	e.Int64(st.samples)
	e.Bool(st.finished)
	trajectory.EncodePoints(e, st.points)
	e.Blob(method)
	return e.Data()
}

func decodeCheckpoint(data []byte) (driverState, []byte, error) {
	d := blob.NewDecoder(data, checkpointMagic, checkpointVersion)
	st := driverState{it: d.Int64(), samples: d.Int64(), finished: d.Bool()}
	st.points = trajectory.DecodePoints(d)
	method := d.Blob()
	if st.it < 0 || st.samples < 0 {
		d.Failf("checkpoint at iteration %d with %d samples", st.it, st.samples)
	}
	if n := len(st.points); n > 0 && (st.points[n-1].Iteration > st.it || st.points[n-1].Samples > st.samples) {
		d.Failf("checkpoint at iteration %d holds a point of iteration %d", st.it, st.points[n-1].Iteration)
	}
	if st.finished && st.it == 0 {
		d.Failf("finished checkpoint before any iteration")
	}
	if err := d.Finish(); err != nil {
		return driverState{}, nil, fmt.Errorf("algos: checkpoint: %w", err)
	}
	return st, method, nil
}

// CheckpointIteration returns the iteration after which a checkpoint blob
// was written (0: before the first iteration).
func CheckpointIteration(state []byte) (int64, error) {
	st, _, err := decodeCheckpoint(state)
	return st.it, err
}

// Run drives m until the budget is spent or m reports Done, and returns the
// snapshots chosen by s. The header of the result is empty; the caller sets
// it.
//
// Each iteration it = 1, 2, ...: check ctx; Step(it); add the samples; record
// a task.Iter with the digest of Params(); append a Point (a copy of
// Snapshot()) if s selects it, it is the first iteration or the run stops
// here; stop if b is reached or Stat.Done; then, if rec.CheckpointDue(it),
// write a checkpoint (driver state and m.MarshalState() in one versioned
// blob).
//
// If rec.Resume returns a checkpoint, Run restores the driver state and
// m.UnmarshalState and continues at the next iteration (a checkpoint of a
// finished run returns its trajectory without stepping). Because methods
// draw from per-iteration streams, a run resumed from any checkpoint returns
// a Trajectory whose encoding equals the uninterrupted run's. The checkpoint
// does not record b and s: resuming with others applies them from the next
// iteration on (the stage identity is expected to pin them).
//
// If ctx is cancelled, Run writes a checkpoint of the state after the last
// completed iteration and returns an error wrapping ctx.Err() (joined with
// the checkpoint error, if any). Errors from Step, the Recorder and state
// encoding end the run and are returned wrapped with the iteration.
func Run(ctx context.Context, m Method, b Budget, s Schedule, rec Recorder) (*trajectory.Trajectory, error) {
	var errs []error
	if b.Samples <= 0 {
		errs = append(errs, fmt.Errorf("%w: Samples = %d, want > 0", ErrBudget, b.Samples))
	}
	if s.Every < 0 || s.PerDecade < 0 {
		errs = append(errs, fmt.Errorf("%w: Every = %d, PerDecade = %d, want ≥ 0", ErrSchedule, s.Every, s.PerDecade))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	var st driverState
	if rec != nil {
		state, ok, err := rec.Resume()
		if err != nil {
			return nil, fmt.Errorf("algos: resume: %w", err)
		}
		if ok {
			var method []byte
			if st, method, err = decodeCheckpoint(state); err != nil {
				return nil, err
			}
			if err := m.UnmarshalState(method); err != nil {
				return nil, fmt.Errorf("algos: resume after iteration %d: method state: %w", st.it, err)
			}
		}
	}

	checkpoint := func() error {
		ms, err := m.MarshalState()
		if err != nil {
			return fmt.Errorf("algos: checkpoint after iteration %d: method state: %w", st.it, err)
		}
		if err := rec.Checkpoint(encodeCheckpoint(&st, ms)); err != nil {
			return fmt.Errorf("algos: checkpoint after iteration %d: %w", st.it, err)
		}
		return nil
	}

	for !st.finished {
		if err := ctx.Err(); err != nil {
			err = fmt.Errorf("algos: run stopped after iteration %d: %w", st.it, err)
			if rec != nil {
				err = errors.Join(err, checkpoint())
			}
			return nil, err
		}
		it := st.it + 1
		stat, err := m.Step(it)
		if err != nil {
			return nil, fmt.Errorf("algos: iteration %d: %w", it, err)
		}
		if stat.Samples < 0 {
			return nil, fmt.Errorf("%w: iteration %d reported %d", ErrSamples, it, stat.Samples)
		}
		prev := st.samples
		st.it, st.samples = it, st.samples+stat.Samples
		if rec != nil {
			rec.Iteration(task.Iter{Iteration: it, Samples: st.samples, Digest: trajectory.Digest(m.Params()), Metrics: stat.Metrics})
		}
		st.finished = b.reached(st.samples) || stat.Done
		if it == 1 || st.finished || s.due(it, prev, st.samples) {
			st.points = append(st.points, trajectory.Point{Iteration: it, Samples: st.samples, Params: slices.Clone(m.Snapshot())})
		}
		if rec != nil && rec.CheckpointDue(it) {
			if err := checkpoint(); err != nil {
				return nil, err
			}
		}
	}
	return &trajectory.Trajectory{Points: st.points}, nil
}

// DecodeBudget reads a stage's sample budget: "budget" (positive; required
// when required is set, else default def.Samples), "strict_budget"
// (default def.Strict) and "budget_per", the name of a coordinate the
// budget is multiplied by (MuJoCo: 1e4 environment steps per unit of
// horizon, spec §4.3).
func DecodeBudget(p *task.Params, def Budget, required bool) Budget {
	var b Budget
	if required || p.Has("budget") {
		b.Samples = p.Int("budget", task.Required(), task.Above(0))
	} else {
		b.Samples = p.Int("budget", task.Default(def.Samples), task.Min(0))
	}
	b.Strict = p.Bool("strict_budget", task.Default(def.Strict))
	if per := p.String("budget_per", task.Default("")); per != "" {
		if v, ok := p.Peek(per); !ok {
			p.Errorf("budget_per", "%q is not a parameter or coordinate of this task", per)
		} else if n, err := strconv.ParseInt(fmt.Sprint(v), 10, 64); err != nil || n < 1 {
			p.Errorf("budget_per", "coordinate %s = %v is not a positive integer", per, v)
		} else {
			b.Samples *= n
		}
	}
	return b
}
