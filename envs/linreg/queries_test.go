package linreg

import (
	"testing"

	"zorepro/pipeline/stream"
)

// TestRewardsHand: w = [1,2], Δ = [1,−1], z = [1,0.5], y = 1, ν = 0.5:
// w+νΔ = [1.5,1.5], ŷ+ = 2.25, r+ = −½·1.25² = −0.78125;
// w−νΔ = [0.5,2.5], ŷ− = 1.75, r− = −½·0.75² = −0.28125.
func TestRewardsHand(t *testing.T) {
	rp, rm := Rewards([]float64{1, 2}, []float64{1, -1}, []float64{1, 0.5}, 1, 0.5)
	if rp != -0.78125 || rm != -0.28125 {
		t.Fatalf("r+ = %v, r− = %v; want −0.78125, −0.28125", rp, rm)
	}
}

// TestQueries: Draw takes the batch of "batch"[it]; Features(k) is x_k[1:];
// Rewards standardizes z = [1, (x[1:]−μ)/s] and equals Rewards on it.
func TestQueries(t *testing.T) {
	src := stream.New(5488, "test/linreg/queries", nil)
	in := Generate(3, src.Rand("instance"))
	q, err := in.NewQueries(2)
	if err != nil || in.Features() != 3 {
		t.Fatal(err)
	}
	q.Draw(src, 4)
	X, y := in.NewBatch(src.Rand("batch", 4), 2)
	w, dir := []float64{0.5, -1, 2, 0.25}, []float64{1, 0.5, -0.5, 2}
	mu, s := []float64{0.1, -0.2, 0.3}, []float64{2, 0.5, 1}
	for k := range 2 {
		x := X.RawRowView(k)
		if f := q.Features(k); len(f) != 3 || f[0] != x[1] || f[2] != x[3] {
			t.Fatalf("Features(%d) = %v, want %v", k, f, x[1:])
		}
		z := []float64{1, (x[1] - mu[0]) / s[0], (x[2] - mu[1]) / s[1], (x[3] - mu[2]) / s[2]}
		wp, wm := Rewards(w, dir, z, y[k], 0.1)
		rp, rm, err := q.Rewards(k, w, dir, 0.1, mu, s, src, 4)
		if err != nil || rp != wp || rm != wm {
			t.Errorf("example %d: rewards %v, %v (%v), want %v, %v", k, rp, rm, err, wp, wm)
		}
	}
}
