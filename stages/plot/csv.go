package plot

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"

	"zorepro/pipeline/task"
	"zorepro/stages/plot/seedscsv"
)

// CurvesCSV returns the plotted numbers: one row per curve and grid point,
// in the order of curves, under the header
//
//	panel,curve,x,mean,band_lo,band_hi,n_seeds
//
// Floats use strconv.FormatFloat(x, 'g', -1, 64) (so they round-trip
// exactly; non-finite values read NaN, +Inf, -Inf). Fields are quoted only
// when they need it (encoding/csv rules); lines end in "\n". It panics when a
// curve's slices differ in length, which Aggregate never produces.
func CurvesCSV(curves []Curve) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{"panel", "curve", "x", "mean", "band_lo", "band_hi", "n_seeds"})
	for _, c := range curves {
		if len(c.Mean) != len(c.X) || len(c.Lo) != len(c.X) || len(c.Hi) != len(c.X) {
			panic(fmt.Sprintf("plot: CurvesCSV: panel %q curve %q: len(X, Mean, Lo, Hi) = %d, %d, %d, %d",
				c.Panel, c.Curve, len(c.X), len(c.Mean), len(c.Lo), len(c.Hi)))
		}
		n := strconv.Itoa(c.N)
		for i := range c.X {
			w.Write([]string{c.Panel, c.Curve, task.FormatFloat(c.X[i]), task.FormatFloat(c.Mean[i]),
				task.FormatFloat(c.Lo[i]), task.FormatFloat(c.Hi[i]), n})
		}
	}
	w.Flush() // writes to a bytes.Buffer cannot fail
	return buf.Bytes()
}

// SeedsCSV returns the per-seed numbers behind a figure: one row per series
// and grid point, in the order of series, under the header
//
//	panel,curve,seed,x,y
//
// with the same number formatting as CurvesCSV.
//
// Like CurvesCSV, it panics on a series whose slices differ in length (a
// programmer error: Aggregate rejects such input).
func SeedsCSV(series []Series) []byte { return seedscsv.Encode(rows(series)) }

// rows are the per-seed numbers of series, one per series and grid point
// in series order, as <figure>-seeds.csv has them (the crossover views
// read them as the report does). A series whose slices differ in length
// panics.
func rows(series []Series) []seedscsv.Row {
	var out []seedscsv.Row
	for _, s := range series {
		if len(s.Y) != len(s.X) {
			panic(fmt.Sprintf("plot: SeedsCSV: panel %q curve %q seed %d: len(X) = %d but len(Y) = %d",
				s.Panel, s.Curve, s.Seed, len(s.X), len(s.Y)))
		}
		for i := range s.X {
			out = append(out, seedscsv.Row{Panel: s.Panel, Curve: s.Curve, Seed: s.Seed, X: s.X[i], Y: s.Y[i]})
		}
	}
	return out
}
