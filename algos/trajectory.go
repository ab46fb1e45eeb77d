package algos

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"zorepro/pipeline/blob"

	"github.com/cespare/xxhash/v2"
)

// Point is one snapshot of a run: after iteration Iteration (1-based), with
// Samples consumed in total, the method's Snapshot() as Params.
type Point struct {
	Iteration, Samples int64
	Params             []float64
}

// Trajectory is the result of Run: the snapshots chosen by the Schedule.
//
// Layout names how Params is to be read by an evaluator (for linear
// regression: linreg.LayoutRaw or linreg.LayoutNormalized) and Meta holds
// free-form labels; Run leaves both empty and the caller sets them before
// encoding. Invariants (checked by MarshalBinary and UnmarshalBinary):
// iterations are ≥ 1 and strictly increasing, samples are ≥ 0 and
// non-decreasing, and every point has the same number of Params.
type Trajectory struct {
	Layout string
	Meta   map[string]string
	Points []Point
}

const (
	trajectoryMagic   = "ZTRJ"
	trajectoryVersion = 1
)

// MarshalBinary encodes the trajectory deterministically ("ZTRJ", version 1):
// Layout; the Meta entries sorted by key; the points in order, each as
// iteration, samples and length-prefixed params. It returns an blob.ErrFormat
// error if the invariants do not hold.
func (t *Trajectory) MarshalBinary() ([]byte, error) {
	if msg := checkPoints(t.Points); msg != "" {
		return nil, fmt.Errorf("%w: %s", blob.ErrFormat, msg)
	}
	e := blob.NewEncoder(trajectoryMagic, trajectoryVersion)
	e.String(t.Layout)
	keys := make([]string, 0, len(t.Meta))
	for k := range t.Meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.Uint64(uint64(len(keys)))
	for _, k := range keys {
		e.String(k)
		e.String(t.Meta[k])
	}
	encodePoints(e, t.Points)
	return e.Data(), nil
}

// UnmarshalBinary decodes a MarshalBinary blob. Besides the framing it
// requires Meta keys in strictly increasing order and the point invariants,
// so every accepted input re-encodes to the same bytes. It never panics; on
// error the receiver is unchanged.
func (t *Trajectory) UnmarshalBinary(data []byte) error {
	d := blob.NewDecoder(data, trajectoryMagic, trajectoryVersion)
	layout := d.String()
	n := d.Count(16)
	var meta map[string]string
	if n > 0 {
		meta = make(map[string]string, n)
	}
	prev := ""
	for i := 0; i < n && d.Err() == nil; i++ {
		k, v := d.String(), d.String()
		if i > 0 && k <= prev {
			d.Failf("meta key %q after %q: keys must be strictly increasing", k, prev)
		}
		meta[k], prev = v, k
	}
	points := decodePoints(d)
	if err := d.Finish(); err != nil {
		return err
	}
	*t = Trajectory{Layout: layout, Meta: meta, Points: points}
	return nil
}

func encodePoints(e *blob.Encoder, pts []Point) {
	e.Uint64(uint64(len(pts)))
	for _, p := range pts {
		e.Int64(p.Iteration)
		e.Int64(p.Samples)
		e.Floats(p.Params)
	}
}

// decodePoints reads points written by encodePoints and checks their
// invariants.
func decodePoints(d *blob.Decoder) []Point {
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
