package plot

import (
	"bytes"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"zorepro/pipeline/task"
)

// FitCSV fits log(y) = c + slope·log(x) by least squares to each seed's
// series (points with x, y > 0) and reports, per panel and curve, the mean
// slope with a 95% Student-t interval across seeds:
// panel,curve,slope,slope_lo,slope_hi,n_seeds. Groups are listed in the
// order of the series.
func FitCSV(series []Series) []byte {
	type key struct{ panel, curve string }
	slopes := map[key][]float64{}
	var keys []key
	for _, s := range series {
		var xs, ys []float64
		for i := range s.X {
			if s.X[i] > 0 && s.Y[i] > 0 {
				xs = append(xs, math.Log(s.X[i]))
				ys = append(ys, math.Log(s.Y[i]))
			}
		}
		if len(xs) < 2 {
			continue
		}
		k := key{s.Panel, s.Curve}
		if _, ok := slopes[k]; !ok {
			keys = append(keys, k)
		}
		slopes[k] = append(slopes[k], slope(xs, ys))
	}
	var b bytes.Buffer
	b.WriteString("panel,curve,slope,slope_lo,slope_hi,n_seeds\n")
	for _, k := range keys {
		m, half := meanCI(slopes[k])
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%d\n", k.panel, k.curve, task.FormatFloat(m), task.FormatFloat(m-half), task.FormatFloat(m+half), len(slopes[k]))
	}
	return b.Bytes()
}

func slope(x, y []float64) float64 {
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(y))
	var sxy, sxx float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
	}
	return sxy / sxx
}

// meanCI returns the mean and the half-width of its 95% Student-t
// interval (NaN for fewer than two values).
func meanCI(v []float64) (mean, half float64) {
	mean, sd := meanSD(v)
	if len(v) < 2 {
		return mean, math.NaN()
	}
	n := float64(len(v))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(0.975)
	return mean, t * sd / math.Sqrt(n)
}

// RatioCSV reports, for every curve, x and panel, the ratio of the mean
// across seeds to the same curve's mean at x in the first panel, with a
// delta-method 95% interval from the two means' standard errors:
// curve,x,panel,ratio,ratio_lo,ratio_hi,base_panel.
func RatioCSV(series []Series, panels, curves []string) []byte {
	type key struct {
		panel, curve string
		x            float64
	}
	vals := map[key][]float64{}
	var xs []float64
	seenX := map[float64]bool{}
	for _, s := range series {
		for i, x := range s.X {
			k := key{s.Panel, s.Curve, x}
			vals[k] = append(vals[k], s.Y[i])
			if !seenX[x] {
				seenX[x] = true
				xs = append(xs, x)
			}
		}
	}
	sortFloats(xs)
	var b bytes.Buffer
	b.WriteString("curve,x,panel,ratio,ratio_lo,ratio_hi,base_panel\n")
	if len(panels) == 0 {
		return b.Bytes()
	}
	base := panels[0]
	for _, c := range curves {
		for _, x := range xs {
			b0, ok := vals[key{base, c, x}]
			if !ok {
				continue
			}
			m0, se0 := meanSE(b0)
			for _, p := range panels {
				v, ok := vals[key{p, c, x}]
				if !ok {
					continue
				}
				m, se := meanSE(v)
				r := m / m0
				half := 1.96 * math.Abs(r) * math.Sqrt(se*se/(m*m)+se0*se0/(m0*m0))
				fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%s,%s\n", c, task.FormatFloat(x), p, task.FormatFloat(r), task.FormatFloat(r-half), task.FormatFloat(r+half), base)
			}
		}
	}
	return b.Bytes()
}

// meanSE returns the mean and the standard error (sample std/√n; 0 for
// fewer than two values).
func meanSE(v []float64) (mean, se float64) {
	mean, sd := meanSD(v)
	if len(v) < 2 {
		return mean, 0
	}
	return mean, sd / math.Sqrt(float64(len(v)))
}

// meanSD returns the mean and the sample standard deviation (NaN for fewer
// than two values), summing in index order.
func meanSD(v []float64) (mean, sd float64) {
	n := float64(len(v))
	for _, x := range v {
		mean += x
	}
	mean /= n
	if len(v) < 2 {
		return mean, math.NaN()
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / (n - 1))
}

func sortFloats(x []float64) {
	for i := 1; i < len(x); i++ {
		for j := i; j > 0 && x[j] < x[j-1]; j-- {
			x[j], x[j-1] = x[j-1], x[j]
		}
	}
}
