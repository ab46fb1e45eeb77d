package stream

import (
	"strings"

	"github.com/cespare/xxhash/v2"
	"sync"
	"testing"
)

func TestSameIdentitySameSequence(t *testing.T) {
	s := New(5488, "train/linreg/d=10/method=ars/seed=5488", nil)
	a, b := s.Rand("directions", 3, 1), s.Rand("directions", 3, 1)
	for i := 0; i < 100; i++ {
		if x, y := a.NormFloat64(), b.NormFloat64(); x != y {
			t.Fatalf("draw %d: %v != %v", i, x, y)
		}
	}
}

func TestDistinctIdentitiesDiffer(t *testing.T) {
	s := New(1, "t", nil)
	first := func(src Source, name string, idx ...uint64) uint64 { return src.PCG(name, idx...).Uint64() }
	seen := map[uint64]string{}
	cases := map[string]uint64{
		"base":     first(s, "a", 1, 2),
		"swap idx": first(s, "a", 2, 1),
		"name":     first(s, "b", 1, 2),
		"root":     first(New(2, "t", nil), "a", 1, 2),
		"scope":    first(New(1, "u", nil), "a", 1, 2),
		"arity":    first(s, "a", 1, 2, 0),
		"sub":      first(s.Sub("trial=0", 1), "a", 1, 2),
	}
	for k, v := range cases {
		if other, ok := seen[v]; ok {
			t.Errorf("%s and %s share a first draw", k, other)
		}
		seen[v] = k
	}
}

// TestDeriveGolden pins the derivation: changing it silently would change
// every recorded result.
const goldenHi, goldenLo = 0xcd00803137250192, 0x7c7ca89591a5ea75

func TestDeriveGolden(t *testing.T) {
	hi, lo := Derive(5488, "train/x", "batch", 7)
	if *update {
		t.Logf("hi=%#x lo=%#x", hi, lo)
		return
	}
	if hi != goldenHi || lo != goldenLo {
		t.Fatalf("Derive changed: got %#x %#x, want %#x %#x", hi, lo, uint64(goldenHi), uint64(goldenLo))
	}
}

func TestLogConcurrentAndSorted(t *testing.T) {
	var l Log
	s := New(9, "task", &l)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			s.Rand("z", uint64(i))
			s.Rand("a")
			s.Sub("trial=1", 283).Rand("batch", uint64(i))
		}(i)
	}
	wg.Wait()
	f := l.Families()
	if len(f) != 3 {
		t.Fatalf("families = %+v, want 3", f)
	}
	if f[0].Name != "a" || f[1].Name != "z" || f[2].Scope != "task/trial=1" || f[2].Root != 283 {
		t.Fatalf("unexpected order/content: %+v", f)
	}
}

// Derive hashes exactly Canonical's text, whether it fits the stack buffer
// or not (a scope longer than 256 bytes).
func TestDeriveMatchesCanonical(t *testing.T) {
	for _, scope := range []string{"", "tune/linreg/d=1000/method=ars/seed=283", strings.Repeat("x/", 200)} {
		for _, idx := range [][]uint64{nil, {0}, {7, 18446744073709551615}} {
			c := Canonical(42, scope, "batch", idx...)
			hi, lo := Derive(42, scope, "batch", idx...)
			if hi != xxhash.Sum64String(c+"\x00hi") || lo != xxhash.Sum64String(c+"\x00lo") {
				t.Errorf("scope of %d bytes, idx %v: Derive is not the digests of Canonical", len(scope), idx)
			}
		}
	}
}

func BenchmarkDerive(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Derive(283, "tune/linreg/d=1000/method=ars/seed=283", "directions", uint64(i), 7)
	}
}
