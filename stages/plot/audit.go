package plot

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Row is one line of a figure's CSV (see CurvesCSV).
type Row struct {
	Panel, Curve    string
	X, Mean, Lo, Hi float64
	N               int
}

// ReadCurvesCSV parses what CurvesCSV wrote.
func ReadCurvesCSV(data []byte) ([]Row, error) {
	recs, err := readCSV(data, []string{"panel", "curve", "x", "mean", "band_lo", "band_hi", "n_seeds"})
	if err != nil {
		return nil, err
	}
	out := make([]Row, 0, len(recs))
	for i, r := range recs {
		var row Row
		var err error
		row.Panel, row.Curve = r[0], r[1]
		fs := []*float64{&row.X, &row.Mean, &row.Lo, &row.Hi}
		for j, f := range fs {
			if *f, err = strconv.ParseFloat(r[2+j], 64); err != nil {
				return nil, fmt.Errorf("line %d: %w", i+2, err)
			}
		}
		if row.N, err = strconv.Atoi(r[6]); err != nil {
			return nil, fmt.Errorf("line %d: %w", i+2, err)
		}
		out = append(out, row)
	}
	return out, nil
}

func readCSV(data []byte, header []string) ([][]string, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = len(header)
	recs, err := r.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 || !slices.Equal(recs[0], header) {
		return nil, fmt.Errorf("header is not %v", header)
	}
	return recs[1:], nil
}

// PointOf recomputes one plotted point from the per-seed values behind it,
// given in the order the figure aggregated them (its -seeds.csv order), with
// exactly the reduction the figure used.
func PointOf(ys []float64, band Band, floor *float64) (mean, lo, hi float64, err error) {
	if len(ys) == 0 {
		return 0, 0, 0, ErrNoSeries
	}
	series := make([]Series, len(ys))
	for i, y := range ys {
		series[i] = Series{Seed: uint64(i), X: []float64{0}, Y: []float64{y}}
	}
	cs, err := AggregateWith(series, AggregateOptions{Band: band, LoFloor: floor})
	if err != nil {
		return 0, 0, 0, err
	}
	return cs[0].Mean[0], cs[0].Lo[0], cs[0].Hi[0], nil
}

// SameFloat reports bit-for-bit equality (NaN equals NaN of the same bits).
func SameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
