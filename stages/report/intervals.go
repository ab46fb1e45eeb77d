package report

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Level is the coverage of every interval.
const Level = 0.95

// Interval methods, as the report names them. Each has its stated coverage
// at the number of seeds it is used with (2 to 10 here): the tests check
// it by seeded simulation (intervals_test.go).
const (
	MethodT          = "Student t"                   // a mean: t with n−1 degrees of freedom
	MethodPairedT    = "paired t"                    // a mean difference over shared seeds: t on the per-seed differences
	MethodWelch      = "Welch t"                     // a difference of means over different seeds
	MethodFieller    = "Fieller"                     // a ratio of means (paired over shared seeds)
	MethodExact      = "Clopper–Pearson"             // a fraction of seeds: the exact binomial interval
	MethodOrder      = "order statistics"            // a median: distribution-free, from the sorted seeds
	MethodSeedSlopes = "t over per-seed slopes"      // a slope: each seed's least-squares slope, then t
	MethodSign       = "Clopper–Pearson, sign count" // the fraction of seeds that moved one way
)

// Interval is a statistic's value, its 95% interval and how the interval
// was made, with the number of seeds behind it. Lo and Hi are infinite
// where the data bound the statistic on one side only (a Fieller ratio
// whose denominator is not clearly away from 0, a median from fewer than
// six seeds) and NaN where no interval exists (one seed).
type Interval struct {
	Value, Lo, Hi float64
	Method        string
	N             int
}

// tQuantile is the two-sided Level quantile of Student's t with df
// degrees of freedom.
func tQuantile(df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - (1-Level)/2)
}

// meanVar returns the mean and the sample variance (n−1) of xs.
func meanVar(xs []float64) (m, v float64) {
	m = mean(xs)
	if len(xs) < 2 {
		return m, math.NaN()
	}
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return m, v / float64(len(xs)-1)
}

// tMean is the mean of xs with its Student t interval.
func tMean(xs []float64, method string) Interval {
	m, v := meanVar(xs)
	iv := Interval{Value: m, Lo: math.NaN(), Hi: math.NaN(), Method: method, N: len(xs)}
	if len(xs) >= 2 {
		half := tQuantile(float64(len(xs)-1)) * math.Sqrt(v/float64(len(xs)))
		iv.Lo, iv.Hi = m-half, m+half
	}
	return iv
}

// pairedDiff is mean(a − b) over shared seeds (a[i] and b[i] of one seed)
// with the t interval of the per-seed differences.
func pairedDiff(a, b []float64) Interval {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return tMean(d, MethodPairedT)
}

// welchDiff is mean(a) − mean(b) over different seeds with Welch's t
// interval (Welch–Satterthwaite degrees of freedom).
func welchDiff(a, b []float64) Interval {
	ma, va := meanVar(a)
	mb, vb := meanVar(b)
	iv := Interval{Value: ma - mb, Lo: math.NaN(), Hi: math.NaN(), Method: MethodWelch, N: min(len(a), len(b))}
	if len(a) < 2 || len(b) < 2 {
		return iv
	}
	sa, sb := va/float64(len(a)), vb/float64(len(b))
	se := math.Sqrt(sa + sb)
	if se == 0 {
		iv.Lo, iv.Hi = iv.Value, iv.Value
		return iv
	}
	df := (sa + sb) * (sa + sb) / (sa*sa/float64(len(a)-1) + sb*sb/float64(len(b)-1))
	half := tQuantile(df) * se
	iv.Lo, iv.Hi = iv.Value-half, iv.Value+half
	return iv
}

// fieller is mean(a) / mean(b) with Fieller's interval: the ρ for which
// mean(a) − ρ·mean(b) is within its t interval of 0. Paired (a[i] and b[i]
// of one seed), the covariance of the two means enters and the t has n−1
// degrees of freedom; unpaired, the means are independent and the smaller
// sample's n−1 is used (conservative). When mean(b) is not clearly away
// from 0 the set is unbounded: (−∞, ∞).
func fieller(a, b []float64, paired bool) Interval {
	ma, va := meanVar(a)
	mb, vb := meanVar(b)
	iv := Interval{Value: ma / mb, Lo: math.NaN(), Hi: math.NaN(), Method: MethodFieller, N: min(len(a), len(b))}
	if len(a) < 2 || len(b) < 2 {
		return iv
	}
	vaa, vbb, vab := va/float64(len(a)), vb/float64(len(b)), 0.0
	df := float64(min(len(a), len(b)) - 1)
	if paired {
		for i := range a {
			vab += (a[i] - ma) * (b[i] - mb)
		}
		vab /= float64(len(a)-1) * float64(len(a))
	}
	t2 := tQuantile(df) * tQuantile(df)
	A := mb*mb - t2*vbb
	B := ma*mb - t2*vab
	C := ma*ma - t2*vaa
	disc := B*B - A*C
	if A <= 0 || disc < 0 {
		iv.Lo, iv.Hi = math.Inf(-1), math.Inf(1)
		return iv
	}
	r := math.Sqrt(disc)
	iv.Lo, iv.Hi = (B-r)/A, (B+r)/A
	return iv
}

// clopperPearson is the fraction k/n with its exact binomial interval.
func clopperPearson(k, n int, method string) Interval {
	iv := Interval{Value: float64(k) / float64(n), Lo: 0, Hi: 1, Method: method, N: n}
	if n == 0 {
		iv.Value, iv.Lo, iv.Hi = math.NaN(), math.NaN(), math.NaN()
		return iv
	}
	a := (1 - Level) / 2
	if k > 0 {
		iv.Lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(a)
	}
	if k < n {
		iv.Hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - a)
	}
	return iv
}

// binomCDF is P(X ≤ k) for X ~ Binomial(n, 1/2).
func binomCDF(k, n int) float64 {
	if k < 0 {
		return 0
	}
	var s float64
	c := 1.0 // C(n, 0)
	for i := 0; i <= k && i <= n; i++ {
		s += c
		c = c * float64(n-i) / float64(i+1)
	}
	return s / math.Pow(2, float64(n))
}

// medianOS is the median of xs with its distribution-free interval from
// order statistics: [x₍ⱼ₎, x₍ₙ₊₁₋ⱼ₎] for the largest j whose coverage,
// 1 − 2·P(Bin(n, ½) ≤ j−1), is at least Level; from fewer than six seeds
// no such j exists and the interval is (−∞, ∞). Values at or above cap
// (when cap > 0) are runs stopped at the cap: the true values are only
// known to be at least cap, so an upper end at the cap is +∞, and the
// median is then a lower bound.
func medianOS(xs []float64, cap float64) Interval {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	iv := Interval{Value: median(s), Lo: math.Inf(-1), Hi: math.Inf(1), Method: MethodOrder, N: n}
	if n == 0 {
		iv.Value, iv.Lo, iv.Hi = math.NaN(), math.NaN(), math.NaN()
		return iv
	}
	for j := n / 2; j >= 1; j-- {
		if 1-2*binomCDF(j-1, n) >= Level {
			iv.Lo, iv.Hi = s[j-1], s[n-j]
			break
		}
	}
	if cap > 0 && iv.Hi >= cap {
		iv.Hi = math.Inf(1)
	}
	return iv
}

// seedSlopes is the mean of per-seed least-squares slopes of log y on
// log x (each seed's points with x, y > 0; a seed needs two) with the t
// interval across seeds: the one definition of a log-log slope, also the
// plot stage's <figure>-fit.csv.
func seedSlopes(series [][2][]float64) Interval {
	var slopes []float64
	for _, s := range series {
		var lx, ly []float64
		for i := range s[0] {
			if s[0][i] > 0 && s[1][i] > 0 {
				lx, ly = append(lx, math.Log(s[0][i])), append(ly, math.Log(s[1][i]))
			}
		}
		if len(lx) >= 2 {
			slopes = append(slopes, olsSlope(lx, ly))
		}
	}
	return tMean(slopes, MethodSeedSlopes)
}

// mean is the arithmetic mean, in order (NaN for no values).
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// olsSlope is the least-squares slope of ys on xs (NaN with fewer than two
// distinct xs).
func olsSlope(xs, ys []float64) float64 {
	mx, my := mean(xs), mean(ys)
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 {
		return math.NaN()
	}
	return sxy / sxx
}
