package events

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestIterEncodingRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for range 2000 {
		it := Iter{Samples: int64(rng.Uint64()), Digest: rng.Uint64()}
		for range rng.IntN(5) {
			name := make([]byte, rng.IntN(300))
			for i := range name {
				name[i] = byte(rng.Uint32())
			}
			it.Metrics = append(it.Metrics, Metric{string(name), math.Float64frombits(rng.Uint64())})
		}
		got, err := decodeIter(appendIter(nil, &it))
		if err != nil {
			t.Fatal(err)
		}
		if !sameIter(got, it) {
			t.Fatalf("round trip of %+v gave %+v", it, got)
		}
	}
}

func TestDecodeIterRejects(t *testing.T) {
	valid := appendIter(nil, &Iter{Samples: 5, Digest: 9, Metrics: []Metric{{"loss", 1}}})
	for name, b := range map[string][]byte{
		"empty":          nil,
		"short digest":   valid[:5],
		"no count":       valid[:9],
		"short name":     valid[:12],
		"short value":    valid[:len(valid)-1],
		"trailing":       append(append([]byte(nil), valid...), 0),
		"huge count":     append(append([]byte(nil), valid[:9]...), 0xff, 0xff, 0xff, 0xff, 0x0f),
		"varint overrun": {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01},
	} {
		if it, err := decodeIter(b); err == nil || !errors.Is(err, ErrCorruptLog) {
			t.Errorf("%s: decodeIter = %+v, %v; want ErrCorruptLog", name, it, err)
		}
	}
}

// FuzzDecodeIter checks that the decoder never panics and that whatever it
// accepts re-encodes to something that decodes to the same value.
func FuzzDecodeIter(f *testing.F) {
	f.Add([]byte{})
	f.Add(appendIter(nil, &Iter{}))
	f.Add(appendIter(nil, &Iter{Samples: -1, Digest: math.MaxUint64, Metrics: []Metric{{"loss", math.NaN()}, {"", math.Inf(-1)}}}))
	f.Add([]byte{0x02, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		it, err := decodeIter(b)
		if err != nil {
			return
		}
		enc := appendIter(nil, &it)
		if len(enc) > len(b) {
			t.Fatalf("decoded %d bytes into a value that encodes to %d", len(b), len(enc))
		}
		again, err := decodeIter(enc)
		if err != nil || !sameIter(again, it) {
			t.Fatalf("re-encoding %+v: %+v, %v", it, again, err)
		}
	})
}

// sameIter compares bit-exactly (NaN == NaN with the same bits).
func sameIter(a, b Iter) bool {
	if a.Iteration != b.Iteration || a.Samples != b.Samples || a.Digest != b.Digest || len(a.Metrics) != len(b.Metrics) {
		return false
	}
	for i := range a.Metrics {
		if a.Metrics[i].Name != b.Metrics[i].Name ||
			math.Float64bits(a.Metrics[i].Value) != math.Float64bits(b.Metrics[i].Value) {
			return false
		}
	}
	return true
}
