package mnist

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"zorepro/envs/mnist/lenet"
	"zorepro/pipeline/stream"
)

// Features returns the number of pixels, the features ARS V2-t
// standardizes with its running statistics (spec §2.6).
func (in *Instance) Features() int { return Pixels }

// Queries is a batch of training images for ARS V2-t (algos/ars, spec
// §2.6): one image per direction, scored for the + and the − perturbation
// by a STOCHASTIC query (§6 item 21): p = softmax(f(z; θ ± ν·Δ)),
// a ~ Categorical(p), reward +1 if a is the label, else −1, where z is the
// image standardized with the method's running statistics. It owns the
// scratch of batches of a fixed size and a free list of network workspaces.
type Queries struct {
	in  *Instance
	idx []int
	x   []float64 // N×784 raw pixels
	y   []int
	ws  workspaces
}

// NewQueries returns the queries of batches of n ≥ 1 training images, or an
// ErrNoTraining error for an instance without training images. It panics if
// n < 1.
func (in *Instance) NewQueries(n int) (*Queries, error) {
	if n < 1 {
		panic(fmt.Sprintf("mnist: NewQueries: batch of %d images", n))
	}
	if err := in.checkTraining(); err != nil {
		return nil, err
	}
	return &Queries{in: in, idx: make([]int, n), x: make([]float64, n*Pixels), y: make([]int, n)}, nil
}

// Draw draws iteration it's images: N indices uniformly WITH replacement
// (§2.1) from src.Rand("batch", it) (DrawTrainBatch), raw 0–255 pixels.
func (q *Queries) Draw(src stream.Source, it int64) {
	q.in.DrawTrainBatch(src.Rand("batch", uint64(it)), q.idx, q.x, q.y)
}

// Features returns image k's raw pixels.
func (q *Queries) Features(k int) []float64 { return q.x[k*Pixels : (k+1)*Pixels] }

// ModeAt returns the network mode of iteration it's queries: lenet.Train in
// iteration 1 (before the original's first evaluation switched the network
// to eval mode for good), lenet.Eval afterwards.
func ModeAt(it int64) lenet.Mode {
	if it == 1 {
		return lenet.Train
	}
	return lenet.Eval
}

// Rewards standardizes image k with μ and s (Standardize) and runs the +
// then the − query in mode ModeAt(it), both drawing from the single stream
// "queries"[it, k]: the query's dropout masks (iteration 1 only, lenet: 50
// draws), then its action (one rng.Float64, lenet.SampleAction). It runs on
// a workspace checked out of the free list for the call's exclusive use; a
// network's results depend only on its inputs, so which workspace a call
// gets changes no bit. A non-finite logit is an ErrNonFinite error.
func (q *Queries) Rewards(k int, theta, dir []float64, nu float64, mu, s []float64, src stream.Source, it int64) (plus, minus float64, err error) {
	ws := q.ws.get()
	defer q.ws.put(ws)
	copy(ws.z, q.Features(k))
	Standardize(ws.z, mu, s)
	return ws.query(theta, dir, nu, ws.z, q.y[k], ModeAt(it), src.Rand("queries", uint64(it), uint64(k)))
}

// workspace is the scratch of one query.
type workspace struct {
	net         *lenet.Net
	plus, minus []float64 // θ ± ν·Δ
	p           []float64 // one softmax row
	z           []float64 // one standardized image
}

// workspaces is a free list: get hands a workspace to one query for its
// exclusive use; put returns it. At most as many exist as queries ever ran
// at once.
type workspaces struct {
	mu   sync.Mutex
	free []*workspace
}

func (w *workspaces) get() *workspace {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := len(w.free); n > 0 {
		ws := w.free[n-1]
		w.free = w.free[:n-1]
		return ws
	}
	return &workspace{
		net:  lenet.New(1),
		plus: make([]float64, lenet.NumParams), minus: make([]float64, lenet.NumParams),
		p: make([]float64, lenet.Classes), z: make([]float64, Pixels),
	}
}

func (w *workspaces) put(ws *workspace) {
	w.mu.Lock()
	w.free = append(w.free, ws)
	w.mu.Unlock()
}

// query returns the rewards of the + and − perturbations of direction dir
// on the standardized image z with label y: θ±_j = θ_j ± ν·dir_j (one
// product ν·dir_j, added and subtracted), logits = Forward(θ±, z, mode,
// rng), p = Softmax, a = SampleAction(p, rng), r = +1 if a = y else −1; the
// + query runs first.
func (ws *workspace) query(theta, dir []float64, nu float64, z []float64, y int, mode lenet.Mode, rng *rand.Rand) (rPlus, rMinus float64, err error) {
	plus, minus, dir := ws.plus[:len(theta)], ws.minus[:len(theta)], dir[:len(theta)] // no bounds checks in the loop: half its time
	for j, t := range theta {
		dj := nu * dir[j]
		plus[j] = t + dj
		minus[j] = t - dj
	}
	var r [2]float64
	for i, th := range [2][]float64{ws.plus, ws.minus} {
		logits := ws.net.Forward(th, z, mode, rng)
		for _, v := range logits {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, 0, fmt.Errorf("%w: %s query", ErrNonFinite, [2]string{"+", "−"}[i])
			}
		}
		lenet.Softmax(ws.p, logits)
		r[i] = -1
		if lenet.SampleAction(ws.p, rng) == y {
			r[i] = 1
		}
	}
	return r[0], r[1], nil
}
