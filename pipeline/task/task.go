package task

import (
	"context"
	"encoding/json"
	"math"
	"strconv"

	"zorepro/pipeline/stream"
)

// Kind is a stage kind.
type Kind interface {
	// Name is the kind's name in dag.yaml.
	Name() string
	// Version is bumped by hand when the kind's results change in a way the
	// hash of its code cannot show.
	Version() int
	// Slots lists the named inputs a task of this kind takes.
	Slots() []Slot
	// Plan decodes one task's parameters. Problems are reported through p;
	// the engine discards the Runner when p.Err() is not nil.
	Plan(p *Params) Runner
}

// Slot is a named input of a kind.
type Slot struct {
	Name     string
	Required bool
	Many     bool // accepts several upstream tasks (e.g. a plot's evaluations)
}

// Runner is a planned task.
type Runner interface {
	// Components are the values, besides the Kind, whose code this task
	// runs; the packages defining their types are roots of the task's code
	// identity.
	Components() []any
	// Run computes the task's outputs.
	Run(ctx context.Context, env Env) error
}

// Native is implemented by components that link native libraries; the
// returned "name version" lines enter the identity of tasks using them.
type Native interface {
	NativeVersions() []string
}

// Coord is one matrix coordinate of a task, e.g. d=10.
type Coord struct {
	Axis, Value string
}

// Input is one upstream task's output as seen by a downstream task.
type Input interface {
	Task() string
	Coord(axis string) (string, bool)
	Coords() []Coord
	// Names lists the upstream task's named outputs, sorted.
	Names() []string
	// Read returns one named output's bytes (verified against its ID).
	Read(name string) ([]byte, error)
	// ID returns the content ID text of a named output.
	ID(name string) string
}

// Metric is one named value of an iteration (e.g. "train_loss"); the event
// log stores it bit-exactly.
type Metric struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// Iter is the one record of an iteration, from the method that steps to the
// event log that stores it: after iteration Iteration (1-based), Samples
// consumed in total, the digest of the parameters (xxhash64 of their
// little-endian IEEE-754 bits) and the iteration's metrics.
type Iter struct {
	Iteration int64    `json:"iteration"`
	Samples   int64    `json:"samples"`
	Digest    uint64   `json:"digest"`
	Metrics   []Metric `json:"metrics,omitempty"`
}

// Env is what a running task sees.
type Env interface {
	// Path is the task's name, e.g. train/linreg/d=10/method=ars/seed=5488.
	Path() string
	Coords() []Coord
	// Seed is the task's "seed" coordinate, if it has one.
	Seed() (uint64, bool)
	// Streams returns the task's stream source: root = Seed (0 without
	// one), scope = Path. Every family drawn is recorded.
	Streams() stream.Source
	// Inputs returns the upstream tasks bound to a slot, in task-path order.
	Inputs(slot string) []Input
	// Output publishes one named output. Names are unique per task.
	Output(name string, data []byte) error
	// Iteration records a per-iteration event.
	Iteration(it Iter)
	// Note records a free-form event (e.g. one tuning trial's score).
	Note(kind string, v any)
	// Resume returns the latest checkpoint of this exact task identity.
	Resume() (state []byte, iteration int64, ok bool, err error)
	// CheckpointDue reports whether enough time passed since the last
	// checkpoint. It affects only when checkpoints are taken, never results.
	CheckpointDue() bool
	// Checkpoint stores state as the resume point after iteration.
	Checkpoint(state []byte, iteration int64) error
	// Parallel calls fn(0..n-1) on up to the engine's worker budget; fn
	// must write only to index-owned slots. It returns the error of the
	// lowest failing index.
	Parallel(ctx context.Context, n int, fn func(i int) error) error
	// Progress reports work done out of total for progress display.
	Progress(done, total int64)
	// Logf writes a line to the run's log.
	Logf(format string, args ...any)
}

// NoteData is the JSON form of Note's payload.
type NoteData struct {
	Kind  string          `json:"kind"`
	Value json.RawMessage `json:"value"`
}

// Costed is implemented by runners that can say, before running, how many
// samples (environment steps, training examples) they will consume at
// most; `pipeline run --dry-run` sums it per stage.
type Costed interface {
	Cost() int64
}

// RateHint is implemented by components that know their typical speed in
// samples per second on one core, for estimates when no run is recorded.
type RateHint interface {
	SamplesPerSecond() float64
}

// SampleCoster is implemented by components whose time per sample depends
// on the task's size (e.g. the dimension d): SampleCost returns the time
// of one sample relative to a reference size, from the task's coordinates
// (coord returns a coordinate's value). Estimates scale a rate recorded at
// one size to another with it; it never reaches a result.
type SampleCoster interface {
	SampleCost(coord func(axis string) (string, bool)) float64
}

// CostPoint is one measured relative per-sample time at a problem size.
type CostPoint struct{ Size, Cost float64 }

// CostTable holds measured relative per-sample times at a few sizes, in
// increasing size; At interpolates between neighbours as a power law and
// extrapolates with the nearest segment's exponent.
type CostTable []CostPoint

// At returns the relative per-sample time at size (1 for an empty table).
func (t CostTable) At(size float64) float64 {
	switch {
	case len(t) == 0 || size <= 0:
		return 1
	case len(t) == 1:
		return t[0].Cost
	}
	i := 1
	for i < len(t)-1 && size > t[i].Size {
		i++
	}
	a, b := t[i-1], t[i]
	k := math.Log(b.Cost/a.Cost) / math.Log(b.Size/a.Size)
	return a.Cost * math.Pow(size/a.Size, k)
}

// CostTables implements SampleCoster with one CostTable per value of a
// coordinate (By, e.g. the method) over another coordinate as the size
// (Size, e.g. d); a value without a table uses Default's.
type CostTables struct {
	Size, By, Default string
	Tables            map[string]CostTable
}

// SampleCost implements SampleCoster (1 when the size is absent or not a
// number).
func (c CostTables) SampleCost(coord func(axis string) (string, bool)) float64 {
	text, ok := coord(c.Size)
	if !ok {
		return 1
	}
	size, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return 1
	}
	key, _ := coord(c.By)
	t, ok := c.Tables[key]
	if !ok {
		t = c.Tables[c.Default]
	}
	return t.At(size)
}

// A Splitter is a Runner whose work is a set of independent parts (a
// tuning grid's trials) that can run as tasks of their own: the dag plans
// one task per part, upstream of the splitting task, which then reads
// their outputs through the slot PartsSlot and only combines them. Parts
// are what a cluster schedules; growing the set (a grid point more) reruns
// only the new parts.
type Splitter interface {
	Parts() []Part
}

// Part is one part of a Splitter's work.
type Part struct {
	// Coords extend the splitting task's coordinates to name the part
	// (its path: the splitting task's, then "axis=value" per coordinate).
	// They also select its inputs: an input of the splitting task whose
	// coordinates contradict them is not the part's.
	Coords []Coord
	// Params are the part's resolved parameters, decoded: its identity
	// (with its inputs and code), in place of the splitting task's.
	Params *Params
	// Runner runs the part. Its Env's Streams are the splitting task's
	// (the same seed and path), so that a part draws what the splitting
	// task would have drawn for it.
	Runner Runner
}

// PartsSlot is the input slot through which a Splitter reads its parts'
// outputs, one input per part in Parts order.
const PartsSlot = "parts"
