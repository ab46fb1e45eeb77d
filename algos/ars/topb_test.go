package ars

import (
	"math"
	"slices"
	"testing"
)

func TestSelectStableTiesAndNaN(t *testing.T) {
	// max(r+, r−) = 1, 3, 3, NaN, 2: the two 3s tie, the smaller index
	// wins; NaN ranks last; the result is in ascending index order.
	rp := []float64{1, 3, -1, math.NaN(), 2}
	rm := []float64{0, 0, 3, math.NaN(), -5}
	if got := Select(rp, rm, 2); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("top 2 = %v", got)
	}
	if got := Select(rp, rm, 3); !slices.Equal(got, []int{1, 2, 4}) {
		t.Fatalf("top 3 = %v", got)
	}
	if got := Select(rp, rm, 5); !slices.Equal(got, []int{0, 1, 2, 3, 4}) {
		t.Fatalf("top 5 = %v", got)
	}
	// ±1 rewards (MNIST): all tie, so the first b directions are kept.
	ones := []float64{1, 1, 1, 1}
	if got := Select(ones, ones, 2); !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("all ties: %v", got)
	}
}

func TestRewardStdKept(t *testing.T) {
	// Kept rewards 1, −1, 1, 1: mean 0.5, population variance 0.75.
	got := RewardStd([]float64{1, 1, 9}, []float64{-1, 1, 9}, []int{0, 1})
	if got != math.Sqrt(0.75) {
		t.Fatalf("σ = %v, want √0.75", got)
	}
	if got := RewardStd([]float64{2, 2}, []float64{2, 2}, []int{0, 1}); got != 1 {
		t.Fatalf("σ of equal rewards = %v, want 1", got)
	}
}
