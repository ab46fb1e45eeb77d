package trajectory

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/cespare/xxhash/v2"

	"zorepro/pipeline/blob"
	"zorepro/pipeline/blob/blobtest"
)

func TestRoundTrip(t *testing.T) {
	tr := &Trajectory{
		Header: Header{Method: "ars", Layout: Normalized, EvalBatch: 10},
		Points: []Point{{1, 20, []float64{1, math.NaN(), math.Inf(-1)}}, {5, 100, []float64{0, math.Copysign(0, -1), 3}}},
	}
	out, _ := blobtest.RoundTrip(t, tr)
	if out.Header != tr.Header || len(out.Points) != 2 {
		t.Fatalf("round trip differs: %+v", out.Header)
	}
	bad := []*Trajectory{
		{Points: []Point{{2, 10, nil}, {2, 20, nil}}},
		{Points: []Point{{1, 10, nil}, {2, 5, nil}}},
		{Points: []Point{{0, 10, nil}}},
		{Points: []Point{{1, 10, []float64{1}}, {2, 20, nil}}},
		{Header: Header{Layout: "sideways"}},
		{Header: Header{EvalBatch: -1}},
	}
	for i, tr := range bad {
		if _, err := tr.MarshalBinary(); !errors.Is(err, blob.ErrFormat) {
			t.Errorf("bad %d: %v", i, err)
		}
	}
}

// v1 builds a version-1 blob by hand: the reserved string, the given
// key/value pairs in the given order, no points.
func v1(reserved string, kv ...string) []byte {
	e := blob.NewEncoder(magic, version)
	e.String(reserved)
	e.Uint64(uint64(len(kv) / 2))
	for _, s := range kv {
		e.String(s)
	}
	e.Uint64(0)
	return e.Data()
}

// TestHeaderBytes pins the encoding of headers that recorded outputs hold:
// the typed header must reproduce them byte for byte.
func TestHeaderBytes(t *testing.T) {
	for _, c := range []struct {
		h  Header
		kv []string
	}{
		{Header{Method: "ars", Layout: Normalized, EvalBatch: 200}, []string{"eval_batch", "200", "layout", "normalized", "method", "ars"}},
		{Header{Method: "mnistsgd", Layout: Raw}, []string{"layout", "raw", "method", "mnistsgd"}},
		{Header{Method: "exact"}, []string{"method", "exact"}},
		{Header{}, nil},
	} {
		got, err := (&Trajectory{Header: c.h}).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if want := v1("", c.kv...); !bytes.Equal(got, want) {
			t.Errorf("%+v: encoding differs from the recorded format", c.h)
		}
	}
}

func TestRejectsNonCanonical(t *testing.T) {
	for name, data := range map[string][]byte{
		"reserved field":    v1("raw", "method", "ars"),
		"unknown key":       v1("", "d", "10", "method", "ars"),
		"unsorted keys":     v1("", "method", "ars", "layout", "raw"),
		"repeated key":      v1("", "method", "ars", "method", "ars"),
		"leading zero":      v1("", "eval_batch", "064"),
		"zero batch":        v1("", "eval_batch", "0"),
		"not a number":      v1("", "eval_batch", "ten"),
		"unknown layout":    v1("", "layout", "sideways"),
		"empty method":      v1("", "method", ""),
		"truncated":         v1("", "method", "ars")[:20],
		"wrong magic":       []byte("ZTRX\x01\x00\x00\x00"),
		"unknown version 2": []byte("ZTRJ\x02\x00\x00\x00"),
	} {
		var tr Trajectory
		if err := tr.UnmarshalBinary(data); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzTrajectory(f *testing.F) {
	tr := &Trajectory{Header: Header{Method: "sgd", Layout: Raw, EvalBatch: 64}, Points: []Point{{1, 64, []float64{1, 2}}, {3, 192, []float64{3, 4}}}}
	b, _ := tr.MarshalBinary()
	f.Add(b)
	f.Add([]byte("ZTRJ\x01\x00\x00\x00"))
	f.Add(v1("", "eval_batch", "064"))
	f.Fuzz(blobtest.Canonical[Trajectory])
}

// TestDigest pins Digest to xxhash64 of the little-endian float bits,
// including inputs longer than the internal 64-value chunk.
func TestDigest(t *testing.T) {
	if got := Digest(nil); got != xxhash.Sum64(nil) {
		t.Errorf("Digest(nil) = %#x", got)
	}
	v := make([]float64, 150)
	var buf []byte
	for i := range v {
		v[i] = math.Sqrt(float64(i)) - 3
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v[i]))
	}
	if Digest(v) != xxhash.Sum64(buf) {
		t.Error("Digest differs from xxhash64 of the LE bits")
	}
	if Digest([]float64{0}) == Digest([]float64{math.Copysign(0, -1)}) {
		t.Error("Digest does not distinguish −0 from +0")
	}
}
