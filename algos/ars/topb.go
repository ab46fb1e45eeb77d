package ars

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Select returns the indices of the top directions by max(r+_k, r−_k):
// a stable sort descending, ties broken by the smaller index, NaN ranked
// below every number; the first top are returned in ascending index order
// (the order the updates sum in). It panics unless 0 < top ≤ len(rPlus) =
// len(rMinus).
func Select(rPlus, rMinus []float64, top int) []int {
	n := len(rPlus)
	if len(rMinus) != n || top < 1 || top > n {
		panic(fmt.Sprintf("ars: Select: %d and %d rewards, top %d", len(rPlus), len(rMinus), top))
	}
	idx := make([]int, n)
	for k := range idx {
		idx[k] = k
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := cmp.Compare(max(rPlus[b], rMinus[b]), max(rPlus[a], rMinus[a])); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	kept := idx[:top]
	slices.Sort(kept)
	return kept
}

// RewardStd returns the population standard deviation (divide by the count)
// of the 2·len(kept) rewards r+_k, r−_k of the kept directions, or 1 if it is
// 0. The values are taken in the order r+_k, r−_k for k in kept; the mean is
// their sum divided by the count, the variance the sum of squared deviations
// divided by the count. It panics if kept is empty.
func RewardStd(rPlus, rMinus []float64, kept []int) float64 {
	if len(kept) == 0 {
		panic("ars: RewardStd of no directions")
	}
	var sum float64
	for _, k := range kept {
		sum += rPlus[k]
		sum += rMinus[k]
	}
	cnt := float64(2 * len(kept))
	mean := sum / cnt
	var ss float64
	for _, k := range kept {
		dp, dm := rPlus[k]-mean, rMinus[k]-mean
		ss += dp * dp
		ss += dm * dm
	}
	sd := math.Sqrt(ss / cnt)
	if sd == 0 {
		return 1
	}
	return sd
}
