package trajectory

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/cespare/xxhash/v2"

	"zorepro/pipeline/blob"
)

// Layout names how a snapshot's values are read by an evaluator.
type Layout string

// Snapshot layouts.
const (
	// Raw: the snapshot is the parameter vector itself (SGD, Newton,
	// REINFORCE).
	Raw Layout = "raw"
	// Normalized: the snapshot is θ ‖ μ ‖ s, the parameters followed by
	// the running mean and standard deviation of the features the method
	// standardizes its inputs with (ARS V2-t, spec §2.6, §3.7).
	Normalized Layout = "normalized"
)

// Header describes a trajectory's snapshots for evaluation. The zero value
// of a field means "not recorded".
type Header struct {
	// Method labels the method that wrote the trajectory (e.g. "ars").
	Method string
	// Layout is the snapshot layout.
	Layout Layout
	// EvalBatch is the number of examples a test batch draws (linear
	// regression evaluates on a fresh batch of the method's batch size,
	// spec §3.1.6).
	EvalBatch int
}

// Header keys in the encoding, sorted.
const (
	keyEvalBatch = "eval_batch"
	keyLayout    = "layout"
	keyMethod    = "method"
)

// entries returns the header's key/value pairs sorted by key.
func (h Header) entries() [][2]string {
	var out [][2]string
	if h.EvalBatch != 0 {
		out = append(out, [2]string{keyEvalBatch, strconv.Itoa(h.EvalBatch)})
	}
	if h.Layout != "" {
		out = append(out, [2]string{keyLayout, string(h.Layout)})
	}
	if h.Method != "" {
		out = append(out, [2]string{keyMethod, h.Method})
	}
	return out
}

// check reports a header that cannot be encoded canonically.
func (h Header) check() string {
	switch {
	case h.EvalBatch < 0:
		return fmt.Sprintf("header: eval batch %d", h.EvalBatch)
	case h.Layout != "" && h.Layout != Raw && h.Layout != Normalized:
		return fmt.Sprintf("header: layout %q", h.Layout)
	}
	return ""
}

// set decodes one key/value pair into h, or describes why it cannot.
func (h *Header) set(k, v string) string {
	switch k {
	case keyEvalBatch:
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || strconv.Itoa(n) != v {
			return fmt.Sprintf("header: eval_batch %q is not a positive integer in canonical form", v)
		}
		h.EvalBatch = n
	case keyLayout:
		if Layout(v) != Raw && Layout(v) != Normalized {
			return fmt.Sprintf("header: layout %q (want %q or %q)", v, Raw, Normalized)
		}
		h.Layout = Layout(v)
	case keyMethod:
		if v == "" {
			return "header: empty method"
		}
		h.Method = v
	default:
		return fmt.Sprintf("header: unknown key %q", k)
	}
	return ""
}

// Point is one snapshot of a run: after iteration Iteration (1-based), with
// Samples consumed in total, the method's snapshot as Params.
type Point struct {
	Iteration, Samples int64
	Params             []float64
}

// Trajectory is the result of a training run: the snapshots its schedule
// kept, and how to read them.
type Trajectory struct {
	Header Header
	Points []Point
}

const (
	magic   = "ZTRJ"
	version = 1
)

// MarshalBinary encodes the trajectory deterministically (see the package
// documentation). It returns an ErrFormat error if the header or the point
// invariants do not hold.
func (t *Trajectory) MarshalBinary() ([]byte, error) {
	if msg := t.Header.check(); msg != "" {
		return nil, fmt.Errorf("%w: %s", blob.ErrFormat, msg)
	}
	if msg := checkPoints(t.Points); msg != "" {
		return nil, fmt.Errorf("%w: %s", blob.ErrFormat, msg)
	}
	e := blob.NewEncoder(magic, version)
	e.String("") // reserved by version 1
	kv := t.Header.entries()
	e.Uint64(uint64(len(kv)))
	for _, p := range kv {
		e.String(p[0])
		e.String(p[1])
	}
	EncodePoints(e, t.Points)
	return e.Data(), nil
}

// UnmarshalBinary decodes a MarshalBinary blob. It accepts only canonical
// input (an empty reserved field, header keys known, strictly increasing
// and canonically written, valid points), so every accepted input
// re-encodes to the same bytes. It never panics; on error the receiver is
// unchanged.
func (t *Trajectory) UnmarshalBinary(data []byte) error {
	d := blob.NewDecoder(data, magic, version)
	if reserved := d.String(); reserved != "" {
		d.Failf("reserved field holds %q", reserved)
	}
	n := d.Count(16)
	var h Header
	prev := ""
	for i := 0; i < n && d.Err() == nil; i++ {
		k, v := d.String(), d.String()
		if i > 0 && k <= prev {
			d.Failf("header key %q after %q: keys must be strictly increasing", k, prev)
		}
		if msg := h.set(k, v); msg != "" {
			d.Failf("%s", msg)
		}
		prev = k
	}
	points := DecodePoints(d)
	if err := d.Finish(); err != nil {
		return err
	}
	*t = Trajectory{Header: h, Points: points}
	return nil
}

// EncodePoints appends pts: their count, then each point's iteration,
// samples and length-prefixed parameters. Checkpoints that carry a partial
// trajectory use it too.
func EncodePoints(e *blob.Encoder, pts []Point) {
	e.Uint64(uint64(len(pts)))
	for _, p := range pts {
		e.Int64(p.Iteration)
		e.Int64(p.Samples)
		e.Floats(p.Params)
	}
}

// DecodePoints reads points written by EncodePoints and checks their
// invariants, recording any problem in d.
func DecodePoints(d *blob.Decoder) []Point {
	n := d.Count(24)
	if d.Err() != nil {
		return nil
	}
	pts := make([]Point, 0, n)
	for i := 0; i < n && d.Err() == nil; i++ {
		pts = append(pts, Point{Iteration: d.Int64(), Samples: d.Int64(), Params: d.Floats()})
	}
	if d.Err() == nil {
		if msg := checkPoints(pts); msg != "" {
			d.Failf("%s", msg)
		}
	}
	return pts
}

// checkPoints describes the first point that breaks the invariants, or
// returns "".
func checkPoints(pts []Point) string {
	for i, p := range pts {
		switch {
		case p.Iteration < 1 || p.Samples < 0:
			return fmt.Sprintf("point %d: iteration %d, samples %d", i, p.Iteration, p.Samples)
		case i > 0 && p.Iteration <= pts[i-1].Iteration:
			return fmt.Sprintf("point %d: iteration %d after %d", i, p.Iteration, pts[i-1].Iteration)
		case i > 0 && p.Samples < pts[i-1].Samples:
			return fmt.Sprintf("point %d: samples %d after %d", i, p.Samples, pts[i-1].Samples)
		case i > 0 && len(p.Params) != len(pts[0].Params):
			return fmt.Sprintf("point %d: %d params, point 0 has %d", i, len(p.Params), len(pts[0].Params))
		}
	}
	return ""
}

// Digest returns the xxhash64 of the little-endian IEEE-754 bits of params,
// in order. It identifies a parameter vector bit for bit in the event log.
func Digest(params []float64) uint64 {
	h := xxhash.New()
	var buf [8 * 64]byte
	for len(params) > 0 {
		n := min(len(params), 64)
		for i, v := range params[:n] {
			binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(v))
		}
		h.Write(buf[:8*n])
		params = params[n:]
	}
	return h.Sum64()
}
