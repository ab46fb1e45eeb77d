package olr

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"zorepro/envs/linreg"
	"zorepro/pipeline/stream"
)

func instance(t testing.TB, d int, cTheta float64) *Instance {
	t.Helper()
	return &Instance{Lin: linreg.Generate(d, stream.New(5488, "olr-test", nil).Rand("instance")), CTheta: cTheta, CA: 3}
}

func TestDrawIsBounded(t *testing.T) {
	in := instance(t, 20, 3)
	S := mat.NewDense(500, in.Dim(), nil)
	a := make([]float64, 500)
	in.Draw(stream.New(1, "t", nil).Rand("rounds"), S, a)
	for i := 0; i < 500; i++ {
		n := mat.Norm(S.RowView(i), 2)
		if math.Abs(n-1) > 1e-12 || math.Abs(a[i]) > in.CA {
			t.Fatalf("round %d: ‖s‖ = %v, a = %v", i, n, a[i])
		}
	}
	// The stream is consistent with θ* = w*: its loss is the noise floor.
	m := in.NewMoments()
	m.Add(S, a)
	if l := m.Loss(in.Lin.WStar) / 500; l > 1e-5 {
		t.Fatalf("average loss of w* = %v, want ≈ 1e-6/‖x‖²", l)
	}
}

// TestBestMatchesLeastSquares: unconstrained, the hindsight optimum is the
// normal-equations solution; constrained, it lies on the sphere and the
// loss gradient there points along −θ (the KKT condition of the ball).
func TestBestMatchesLeastSquares(t *testing.T) {
	in := instance(t, 8, 100)
	n := 300
	S := mat.NewDense(n, in.Dim(), nil)
	a := make([]float64, n)
	in.Draw(stream.New(2, "t", nil).Rand("rounds"), S, a)
	m := in.NewMoments()
	m.Add(S.Slice(0, 100, 0, in.Dim()).(*mat.Dense), a[:100])
	m.Add(S.Slice(100, n, 0, in.Dim()).(*mat.Dense), a[100:])
	var ls mat.VecDense
	if err := ls.SolveVec(S, mat.NewVecDense(n, a)); err != nil {
		t.Fatal(err)
	}
	best, constrained, err := m.Best()
	if err != nil || constrained {
		t.Fatalf("Best: constrained %v, %v", constrained, err)
	}
	for j := range best {
		if math.Abs(best[j]-ls.AtVec(j)) > 1e-8 {
			t.Fatalf("θ[%d] = %v, least squares %v", j, best[j], ls.AtVec(j))
		}
	}
	direct := 0.0
	for i := 0; i < n; i++ {
		r := mat.Dot(S.RowView(i), mat.NewVecDense(len(best), best)) - a[i]
		direct += r * r
	}
	if got := m.Loss(best); math.Abs(got-direct) > 1e-9*math.Max(1, direct) {
		t.Fatalf("Loss from moments %v, direct %v", got, direct)
	}

	in.CTheta = 0.3 * mat.Norm(&ls, 2)
	best, constrained, err = m.Best()
	if err != nil || !constrained {
		t.Fatalf("constrained Best: %v, %v", constrained, err)
	}
	if nb := mat.Norm(mat.NewVecDense(len(best), best), 2); math.Abs(nb-in.CTheta) > 1e-9 {
		t.Fatalf("‖θ‖ = %v, want C_θ = %v", nb, in.CTheta)
	}
	// ∇ = 2(SᵀSθ − Sᵀa) must be anti-parallel to θ.
	var g mat.VecDense
	g.MulVec(m.sts, mat.NewVecDense(len(best), best))
	g.SubVec(&g, mat.NewVecDense(len(m.sta), m.sta))
	cos := mat.Dot(&g, mat.NewVecDense(len(best), best)) / (mat.Norm(&g, 2) * in.CTheta)
	if cos > -1+1e-8 {
		t.Fatalf("gradient not anti-parallel to θ on the sphere: cos = %v", cos)
	}
	// Any other point of the ball does no better (spot check).
	if m.Loss(make([]float64, len(best))) < m.Loss(best) {
		t.Fatal("θ = 0 beats the constrained optimum")
	}
}

func TestMomentsAndInstanceRoundTrip(t *testing.T) {
	in := instance(t, 5, 3)
	S := mat.NewDense(40, in.Dim(), nil)
	a := make([]float64, 40)
	in.Draw(stream.New(3, "t", nil).Rand("rounds"), S, a)
	m := in.NewMoments()
	m.Add(S, a)
	b, _ := m.MarshalBinary()
	m2 := in.NewMoments()
	if err := m2.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	b2, _ := m2.MarshalBinary()
	if string(b) != string(b2) || m2.Rounds() != 40 {
		t.Fatal("moments round trip differs")
	}
	if err := m2.UnmarshalBinary(b[1:]); err == nil {
		t.Fatal("truncated moments accepted")
	}
	data, _ := in.MarshalBinary()
	var back Instance
	if err := back.UnmarshalBinary(data); err != nil || back.CTheta != 3 || back.CA != 3 || back.Dim() != in.Dim() {
		t.Fatalf("instance round trip: %v", err)
	}
	if err := back.UnmarshalBinary(data[:10]); err == nil {
		t.Fatal("truncated instance accepted")
	}
}
