package crossing

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"zorepro/stages/plot/seedscsv"
)

// body builds keys whose leader − rival differences are d[i] + noise, the
// noise −1, 0, +1 over three seeds (so every paired interval is centred on
// d[i] with the same half-width).
func body(at []float64, d ...[]float64) []Key {
	var keys []Key
	for i, x := range at {
		k := Key{At: x}
		for _, noise := range []float64{-1, 0, 1} {
			k.Leader = append(k.Leader, 10+noise/2)
		}
		for _, dr := range d {
			var r []float64
			for _, noise := range []float64{-1, 0, 1} {
				r = append(r, 10-dr[i]-noise/2)
			}
			k.Rivals = append(k.Rivals, r)
		}
		keys = append(keys, k)
	}
	return keys
}

// Known answers: with every interval ±1·t(0.975, 2)/√3 ≈ ±2.48 around
// its difference, a difference of ±10 is clearly decided and 0 is not.
func TestFindBrackets(t *testing.T) {
	at := []float64{1, 2, 4, 8}
	b := Find(body(at, []float64{-10, -10, 10, 10}), 0.05)
	// Lo 2, Hi 4; the mean advantage −10 at 2 and +10 at 4 crosses 0
	// half way in log key: 2·√2.
	if b.Lo != 2 || b.Hi != 4 || math.Abs(b.Point-2*math.Sqrt2) > 1e-12 || !b.Consistent() || b.Seeds != 3 {
		t.Errorf("one rival: %+v", b)
	}
	if want := []Side{Behind, Behind, Ahead, Ahead}; !slices.Equal(b.Sides, want) {
		t.Errorf("sides %v, want %v", b.Sides, want)
	}
	// A second rival the leader passes only at 8: ahead of the best of
	// them from 8 on; at 4 it is behind that rival.
	b = Find(body(at, []float64{-10, -10, 10, 10}, []float64{-10, -10, -10, 10}), 0.05)
	if b.Lo != 4 || b.Hi != 8 || math.Abs(b.Point-4*math.Sqrt2) > 1e-12 {
		t.Errorf("two rivals: %+v", b)
	}
	// Undecided keys bound nothing (the mean advantage is 0 at 2, the
	// point); ahead everywhere is H* below the grid.
	b = Find(body(at, []float64{0, 0, 10, 10}), 0.05)
	if b.Lo != 0 || b.Hi != 4 || b.Point != 2 {
		t.Errorf("undecided below: %+v", b)
	}
	b = Find(body(at, []float64{10, 10, 10, 10}), 0.05)
	if b.Lo != 0 || b.Hi != 1 || !math.IsNaN(b.Point) {
		t.Errorf("ahead everywhere: %+v", b)
	}
	b = Find(body(at, []float64{-10, -10, -10, -10}), 0.05)
	if b.Lo != 8 || !math.IsInf(b.Hi, 1) || !math.IsNaN(b.Point) {
		t.Errorf("behind everywhere: %+v", b)
	}
	// Clearly ahead at 2 and clearly behind at 4: no single crossover.
	if b = Find(body(at, []float64{-10, 10, -10, 10}), 0.05); b.Consistent() {
		t.Errorf("two sign changes: %+v is consistent", b)
	}
}

// Known answers: the lines through (1, 2] at x = 1 and (10, 20] at x =
// 100 have slopes from log(10/2)/log(100) to log(20/1)/log(100).
func TestSlopes(t *testing.T) {
	x := []float64{1, 100}
	lo, hi, ok := Slopes(x, []Bracket{{Lo: 1, Hi: 2}, {Lo: 10, Hi: 20}})
	if !ok || math.Abs(lo-math.Log(5)/math.Log(100)) > 1e-12 || math.Abs(hi-math.Log(20)/math.Log(100)) > 1e-12 {
		t.Errorf("slopes [%v, %v] %v", lo, hi, ok)
	}
	// An unbounded side bounds nothing: (0, 2] and (10, +Inf).
	lo, hi, ok = Slopes(x, []Bracket{{Lo: 0, Hi: 2}, {Lo: 10, Hi: math.Inf(1)}})
	if !ok || math.Abs(lo-math.Log(5)/math.Log(100)) > 1e-12 || !math.IsInf(hi, 1) {
		t.Errorf("half-open: [%v, %v] %v", lo, hi, ok)
	}
	// A third body at x = 10 above both: no line passes through all.
	if _, _, ok = Slopes([]float64{1, 10, 100}, []Bracket{{Lo: 1, Hi: 2}, {Lo: 30, Hi: 40}, {Lo: 10, Hi: 20}}); ok {
		t.Error("no line through all three brackets, yet ok")
	}
	// Two bodies at one x whose brackets do not overlap, and an
	// inconsistent bracket: none.
	if _, _, ok = Slopes([]float64{17, 17}, []Bracket{{Lo: 1, Hi: 2}, {Lo: 3, Hi: 4}}); ok {
		t.Error("disjoint brackets at one x, yet ok")
	}
	if _, _, ok = Slopes([]float64{1}, []Bracket{{Lo: 4, Hi: 2}}); ok {
		t.Error("an inconsistent bracket, yet ok")
	}
	slope, c := Fit([]float64{1, 100}, []Bracket{{Point: 2}, {Point: 20}}, 0.5)
	if math.Abs(slope-0.5) > 1e-12 || math.Abs(c-(math.Log(2)+math.Log(20)-0.5*math.Log(100))/2) > 1e-12 {
		t.Errorf("fit %v %v", slope, c)
	}
}

// Coverage by seeded simulation at the crossover profile's size: six
// bodies at its d/p, eight horizons, 10 seeds, the true H* = 0.9·(d/p)^½
// and the leader's true advantage a·log(H/H*) (one sign change), paired
// normal noise. With α = 0.05/(8·6·R) per interval the slope interval
// must hold ½ in at least 95% of the data sets, for one rival and for
// three (the best of which decides H*). It must also be informative: in
// most data sets bounded on both sides and excluding 0.
func TestSlopeCoverage(t *testing.T) {
	xs := []float64{8, 11, 17, 17, 111, 376}
	horizons := []float64{1, 2, 3, 5, 8, 13, 21, 34}
	for _, rivals := range []int{1, 3} {
		rng := rand.New(rand.NewPCG(44, uint64(rivals)))
		const sims = 2000
		covered, informative := 0, 0
		alpha := 0.05 / float64(len(horizons)*len(xs)*rivals)
		for range sims {
			bs := make([]Bracket, len(xs))
			for i, x := range xs {
				hstar := 0.9 * math.Sqrt(x)
				var keys []Key
				for _, h := range horizons {
					k := Key{At: h}
					for range 10 {
						k.Leader = append(k.Leader, rng.NormFloat64())
					}
					for r := range rivals {
						// The first rival is the best: the others are
						// overtaken earlier (at 0.7 and 0.5 of H*).
						hr := hstar * []float64{1, 0.7, 0.5}[r]
						adv := 3 * math.Log(h/hr)
						var v []float64
						for s := range 10 {
							v = append(v, k.Leader[s]-adv+rng.NormFloat64())
						}
						k.Rivals = append(k.Rivals, v)
					}
					keys = append(keys, k)
				}
				bs[i] = Find(keys, alpha)
			}
			lo, hi, ok := Slopes(xs, bs)
			if ok && lo <= 0.5 && 0.5 <= hi {
				covered++
			}
			if ok && lo > 0 && !math.IsInf(hi, 1) {
				informative++
			}
		}
		if got := float64(covered) / sims; got < 0.95 {
			t.Errorf("%d rival(s): the slope interval held ½ in %.3f of %d data sets, want at least 0.95", rivals, got, sims)
		}
		if got := float64(informative) / sims; got < 0.5 {
			t.Errorf("%d rival(s): the slope interval was bounded and above 0 in only %.3f of %d data sets", rivals, got, sims)
		}
		t.Logf("%d rival(s): coverage %.3f, bounded and above 0 in %.3f", rivals, float64(covered)/sims, float64(informative)/sims)
	}
}

// A body whose mean ratio of leader over rival never leaves the premise's
// range takes no part: its bracket bounds nothing and says why, even
// though its paired intervals decide every key.
func TestAnalyzePremise(t *testing.T) {
	var rows []seedscsv.Row
	for _, h := range []float64{1, 2, 4, 8} {
		for s, noise := range []float64{-1, 0, 1} {
			d := 100 * math.Log(h/3) // "a": crosses at 3
			e := 1e-3 * math.Log(h/3)
			rows = append(rows,
				seedscsv.Row{Panel: "a", Curve: "arsv1", Seed: uint64(s + 1), X: h, Y: 100 + d + noise/2},
				seedscsv.Row{Panel: "a", Curve: "exact", Seed: uint64(s + 1), X: h, Y: 100 - noise/2},
				seedscsv.Row{Panel: "still", Curve: "arsv1", Seed: uint64(s + 1), X: h, Y: 170 + e + noise*1e-6},
				seedscsv.Row{Panel: "still", Curve: "exact", Seed: uint64(s + 1), X: h, Y: 170 - noise*1e-6})
		}
	}
	curves := []string{"arsv1", "exact"}
	an, err := Analyze(rows, []string{"a", "still"}, []float64{1, 10}, curves, Premise{})
	if err != nil || an.Used() != 2 || an.Brackets[1].Lo != 2 || an.Brackets[1].Hi != 4 {
		t.Fatalf("no premise: %v %+v", err, an.Brackets)
	}
	an, err = Analyze(rows, []string{"a", "still"}, []float64{1, 10}, curves, Premise{Lo: 0.999, Hi: 1.001})
	if err != nil || an.Used() != 1 {
		t.Fatalf("premise: %v, %d used", err, an.Used())
	}
	a, st := an.Brackets[0], an.Brackets[1]
	if a.Unused != "" || a.Lo != 2 || a.Hi != 4 {
		t.Errorf("the body that learns: %+v", a)
	}
	if st.Lo != 0 || !math.IsInf(st.Hi, 1) || !math.IsNaN(st.Point) || !strings.Contains(st.Unused, "the mean arsv1 / exact is 0.999994 at 1") || !strings.HasSuffix(st.Unused, "which never leaves [0.999, 1.001]") {
		t.Errorf("the still body: %+v", st)
	}
	if want := []Side{Behind, Behind, Ahead, Ahead}; !slices.Equal(st.Sides, want) {
		t.Errorf("the still body's sides %v, want %v (its intervals decide every key)", st.Sides, want)
	}
}
