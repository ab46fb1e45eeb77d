package ars

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"math/rand/v2"
)

// Direction fills dir with standard normals from pcg: value for value and
// bit for bit what rand.New(pcg).NormFloat64() draws in index order, and it
// leaves pcg in the state those draws leave it in.
//
// A direction is as many normals as the problem has parameters (21,840 for
// the MNIST network, N = 50 directions per iteration), and drawing them through math/rand/v2
// is about half of an MNIST iteration: every draw calls the generator
// through the rand.Source interface and takes the sign of |j| with a
// branch that mispredicts half the time. Direction runs the same generator
// (PCG with DXSM output, advanced as rand.PCG advances it) and the
// ziggurat's fast path (Marsaglia & Tsang, 2000), taken by about 97% of
// draws, inline, with the layer tables read from math/rand/v2 at start-up
// (zigguratTables); every other draw is redone by math/rand/v2 itself from
// the state before it, on this generator, so the rare paths are
// math/rand/v2's own code.
// TestDirectionMatchesMathRand compares the two over millions of draws,
// the rare ones included.
func Direction(dir []float64, pcg *rand.PCG) {
	var buf [20]byte
	state, err := pcg.AppendBinary(buf[:0])
	if err != nil || len(state) != 20 || string(state[:4]) != "pcg:" {
		panic(fmt.Sprintf("ars: Direction: unexpected rand.PCG state %q (%v)", state, err))
	}
	hi, lo := binary.BigEndian.Uint64(state[4:]), binary.BigEndian.Uint64(state[12:])
	var slow *slowPath
	for k := range dir {
		h, l := hi, lo
		hi, lo = pcgNext(hi, lo)
		u := dxsm(hi, lo)
		j := int32(u)
		i := u >> 32 & 0x7F
		m := j >> 31 // 0 or −1: |j| = (j^m) − m without a branch
		if uint32((j^m)-m) < zig.kn[i] {
			dir[k] = float64(j) * float64(zig.wn[i])
			continue
		}
		if slow == nil {
			slow = newSlowPath()
		}
		dir[k], hi, lo = slow.draw(h, l)
	}
	pcg.Seed(hi, lo)
}

// pcgNext advances rand.PCG's 128-bit LCG state: state·mul + inc, the
// constants of math/rand/v2.
func pcgNext(hi, lo uint64) (uint64, uint64) {
	const (
		mulHi = 2549297995355413924
		mulLo = 4865540595714422341
		incHi = 6364136223846793005
		incLo = 1442695040888963407
	)
	h, l := bits.Mul64(lo, mulLo)
	h += hi*mulLo + lo*mulHi
	l, c := bits.Add64(l, incLo, 0)
	h, _ = bits.Add64(h, incHi, c)
	return h, l
}

// dxsm is rand.PCG's output function of an advanced state.
func dxsm(hi, lo uint64) uint64 {
	const cheapMul = 0xda942042e4dd58b5
	hi ^= hi >> 32
	hi *= cheapMul
	hi ^= hi >> 48
	hi *= lo | 1
	return hi
}

// slowPath redoes a draw with math/rand/v2's NormFloat64 from a given
// state, over gen: the generator of rand.PCG (TestDirectionMatchesMathRand
// checks that they agree), whose state it can read back directly.
type slowPath struct {
	g   gen
	rng *rand.Rand
}

func newSlowPath() *slowPath {
	s := &slowPath{}
	s.rng = rand.New(&s.g)
	return s
}

// draw returns the normal math/rand/v2 draws from state (hi, lo) and the
// state after it.
func (s *slowPath) draw(hi, lo uint64) (float64, uint64, uint64) {
	s.g = gen{hi, lo}
	x := s.rng.NormFloat64()
	return x, s.g.hi, s.g.lo
}

// gen is rand.PCG as a rand.Source with its state in the open.
type gen struct{ hi, lo uint64 }

func (g *gen) Uint64() uint64 {
	g.hi, g.lo = pcgNext(g.hi, g.lo)
	return dxsm(g.hi, g.lo)
}

// zig holds the ziggurat's fast-path tables: a draw in layer i with 32-bit
// value j is accepted when |j| < kn[i] and is then j·wn[i].
var zig = zigguratTables()

// zigguratTables reads math/rand/v2's tables through its own NormFloat64,
// fed by a scripted source: a draw whose first value u = i<<32 | uint32(j)
// is accepted on the fast path uses exactly one value and returns j·wn[i].
// j = 1 gives wn[i] itself; a bisection over |j| finds the first |j| that
// is not accepted, kn[i] (0 for a layer that accepts nothing). It panics if
// math/rand/v2 ever stops behaving that way, rather than draw other
// numbers.
func zigguratTables() (t struct {
	kn [128]uint32
	wn [128]float32
}) {
	src := &scripted{}
	r := rand.New(src)
	// accepted reports whether the draw with first value u takes the fast
	// path, and its value.
	accepted := func(u uint64) (bool, float64) {
		src.first, src.calls = u, 0
		x := r.NormFloat64()
		return src.calls == 1, x
	}
	for i := range uint64(128) {
		// Layers whose fast path accepts nothing (kn = 0) or only j = 0
		// (kn = 1, value 0) never use their width.
		if ok, _ := accepted(i << 32); !ok {
			continue
		}
		ok, w := accepted(i<<32 | 1)
		if !ok {
			t.kn[i] = 1
			continue
		}
		if float64(float32(w)) != w {
			panic(fmt.Sprintf("ars: math/rand/v2's ziggurat: layer %d has no float32 width (%v)", i, w))
		}
		t.wn[i] = float32(w)
		// The first rejected |j| in [2, 2^31]; |j| = 2^31 is j = −2^31.
		lo, hi := uint64(2), uint64(1)<<31+1 // accepted below lo; hi: none found yet
		for lo < hi {
			mid := lo + (hi-lo)/2
			j := int32(mid)
			if mid == 1<<31 {
				j = -1 << 31
			}
			if ok, x := accepted(i<<32 | uint64(uint32(j))); ok {
				if x != float64(j)*float64(t.wn[i]) {
					panic(fmt.Sprintf("ars: math/rand/v2's ziggurat: layer %d, j = %d gives %v", i, j, x))
				}
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		if lo > 1<<32-1 {
			panic("ars: math/rand/v2's ziggurat: a layer accepts every draw")
		}
		t.kn[i] = uint32(lo)
	}
	return t
}

// scripted is a rand.Source whose first value is first and every later one
// 0 (a fast-path draw of 0 in layer 0, which ends any slow path), counting
// the values handed out.
type scripted struct {
	first uint64
	calls int
}

func (s *scripted) Uint64() uint64 {
	s.calls++
	if s.calls == 1 {
		return s.first
	}
	return 0
}
