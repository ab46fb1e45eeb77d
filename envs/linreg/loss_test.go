package linreg

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"zorepro/pipeline/stream"
)

// TestSquaredLossGradient: the loss equals Loss on the batch drawn from
// "batch"[it] bit for bit, and the gradient equals (1/B)·Xᵀ(Xw − y)
// computed element by element (to roundoff).
func TestSquaredLossGradient(t *testing.T) {
	src := stream.New(5488, "test/linreg/loss", nil)
	in := Generate(10, src.Rand("instance"))
	w := in.InitialWeights(src.Rand("w0"))
	l, err := in.NewLoss(64)
	if err != nil {
		t.Fatal(err)
	}
	g := make([]float64, in.Dim())
	loss, err := l.Gradient(g, w, src, 3)
	if err != nil {
		t.Fatal(err)
	}
	X, y := in.NewBatch(src.Rand("batch", 3), 64)
	if want := Loss(w, X, y); loss != want {
		t.Errorf("loss %v, Loss %v", loss, want)
	}
	r := make([]float64, 64)
	for i := range r {
		r[i] = mat.Dot(mat.NewVecDense(len(w), X.RawRowView(i)), mat.NewVecDense(len(w), w)) - y[i]
	}
	for j := range g {
		var want float64
		for i := range r {
			want += X.At(i, j) * r[i]
		}
		want /= 64
		if math.Abs(g[j]-want) > 1e-12*(1+math.Abs(want)) {
			t.Errorf("g[%d] = %v, want %v", j, g[j], want)
		}
	}
}
