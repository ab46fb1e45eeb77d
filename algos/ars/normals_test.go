package ars

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Direction draws what math/rand/v2's NormFloat64 draws over the same PCG,
// bit for bit and in order, including the draws that leave the fast path
// (the tail beyond rn and the wedges, which math/rand/v2 redoes), and leaves
// the PCG where NormFloat64 leaves it, whatever the lengths it is called
// with.
func TestDirectionMatchesMathRand(t *testing.T) {
	slow, tail, total := 0, 0, 0
	for s := range uint64(200) {
		seed1, seed2 := s*0x9e3779b97f4a7c15, ^s
		p := rand.NewPCG(seed1, seed2)
		ref := rand.New(rand.NewPCG(seed1, seed2))
		for _, size := range []int{1, 7, 21840, 3, 0, 2} {
			dir := make([]float64, size)
			Direction(dir, p)
			for i, got := range dir {
				want := ref.NormFloat64()
				if math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("seed %d, length %d, draw %d: %v, math/rand/v2 %v", s, size, i, got, want)
				}
				if math.Abs(got) > 3.442619855899 { // only the base strip's tail reaches past rn
					tail++
				}
				total++
			}
		}
		// The generator goes on where NormFloat64 leaves it.
		if got, want := p.Uint64(), ref.Uint64(); got != want {
			t.Fatalf("seed %d: next value %#x, math/rand/v2's %#x", s, got, want)
		}
	}
	// How many draws left the fast path, counted on the same generator.
	p := rand.NewPCG(1, 2)
	for range 1000000 {
		u := p.Uint64()
		j := int32(u)
		i := u >> 32 & 0x7F
		m := j >> 31
		if !(uint32((j^m)-m) < zig.kn[i]) {
			slow++
		}
	}
	if tail == 0 || slow < 10000 {
		t.Errorf("%d draws, %d from the tail; %d of 10^6 values leave the fast path: the rare paths are not exercised", total, tail, slow)
	}
	t.Logf("%d draws, %d from the tail; %d of 10^6 values leave the fast path", total, tail, slow)
}

// The tables read from math/rand/v2 are the ziggurat's: widths increasing
// toward the base strip's edge, thresholds below 2^31.
func TestZigguratTables(t *testing.T) {
	for i := 1; i < 128; i++ {
		if zig.kn[i] >= 1<<31 {
			t.Errorf("kn[%d] = %#x ≥ 2^31", i, zig.kn[i])
		}
		if i > 1 && zig.kn[i] > 1 && !(zig.wn[i] > zig.wn[i-1]) {
			t.Errorf("wn[%d] = %v not above wn[%d] = %v", i, zig.wn[i], i-1, zig.wn[i-1])
		}
	}
	// wn[127]·2^31 is the base strip's edge rn.
	if r := float64(zig.wn[127]) * (1 << 31); math.Abs(r-3.442619855899) > 1e-6 {
		t.Errorf("wn[127]·2^31 = %v, want rn = 3.442619855899", r)
	}
}

func BenchmarkDirection(b *testing.B) {
	dir := make([]float64, 21840)
	b.Run("Direction", func(b *testing.B) {
		p := rand.NewPCG(1, 2)
		for range b.N {
			Direction(dir, p)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(dir)), "ns/normal")
	})
	b.Run("math-rand-v2", func(b *testing.B) {
		r := rand.New(rand.NewPCG(1, 2))
		for range b.N {
			for j := range dir {
				dir[j] = r.NormFloat64()
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(dir)), "ns/normal")
	})
}
