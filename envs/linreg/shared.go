package linreg

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// shared holds the instances decoded in this process (blob.Shared): the
// tasks that read one generate output (a tuning grid's trials on one seed,
// up to 125 at a time in a cohort) share one decoded, read-only copy (16
// MB at d = 1000).
var shared blob.Shared[Instance, *Instance]

// Shared implements algos.SharedLoader.
func (Env) Shared(id string, read func() ([]byte, error)) (*Instance, error) {
	return shared.Get(id, read)
}

// sharing is how an instance draws its batches through a cohort.
type sharing struct {
	s      task.Sharer
	prefix string
	of     *Instance // the instance shared, kept alive for shared
}

// WithSharer implements algos.DrawSharer: a copy of in that takes its
// training batches (every draw of src.Rand("batch", it), the costly
// Factor product of §3.1) from s under keys beginning with prefix, so
// that the tasks of a cohort on one instance and one stream compute each
// batch once. Evaluation batches are drawn as before.
func (Env) WithSharer(in *Instance, s task.Sharer, prefix string) *Instance {
	cp := *in
	cp.share = &sharing{s: s, prefix: prefix, of: in}
	return &cp
}

// batch is one shared training batch.
type batch struct {
	X *mat.Dense
	y []float64
}

// drawBatch fills iteration it's training batch into X and y: Batch with
// src.Rand("batch", it), or, for an instance drawing through a cohort, a
// copy of that batch as the cohort drew it once (the same bits). The
// stream is asked for either way, so the task's stream log is the same.
func (in *Instance) drawBatch(src stream.Source, it int64, X *mat.Dense, y []float64) {
	rng := src.Rand("batch", uint64(it))
	if in.share == nil {
		in.Batch(rng, X, y)
		return
	}
	n, _ := X.Dims()
	key := fmt.Sprintf("%s %s rows=%d", in.share.prefix, stream.Canonical(src.Root(), src.Scope(), "batch", uint64(it)), n)
	b := in.share.s.Share(key, func() any {
		bX, by := mat.NewDense(n, in.Dim(), nil), make([]float64, n)
		in.Batch(rng, bX, by)
		return batch{X: bX, y: by}
	}).(batch)
	X.Copy(b.X)
	copy(y, b.y)
}
