package curvecsv

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// ErrMalformed is returned when data is not a curve.csv: a header that does
// not start iteration,samples, a row's field count, a number that does not
// parse.
var ErrMalformed = errors.New("curvecsv: malformed curve.csv")

// ErrNoColumn is returned by Column for a name the curve does not have.
var ErrNoColumn = errors.New("curvecsv: no such column")

// Row is one evaluated snapshot: the training iteration it was taken at,
// the samples consumed by then, and one value per metric.
type Row struct {
	Iteration, Samples int64
	Values             []float64 // in the order of Curve.Metrics
}

// Curve is a parsed curve.csv.
type Curve struct {
	Metrics []string // the metric columns after iteration and samples
	Rows    []Row
}

// Parse reads a curve.csv, rows in file order.
func Parse(data []byte) (*Curve, error) {
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if len(recs) == 0 || len(recs[0]) < 2 || recs[0][0] != "iteration" || recs[0][1] != "samples" {
		return nil, fmt.Errorf("%w: header does not start iteration,samples", ErrMalformed)
	}
	c := &Curve{Metrics: slices.Clone(recs[0][2:])}
	c.Rows = make([]Row, 0, len(recs)-1)
	for i, rec := range recs[1:] {
		it, err1 := strconv.ParseInt(rec[0], 10, 64)
		samples, err2 := strconv.ParseInt(rec[1], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%w: line %d: iteration and samples %q, %q are not integers", ErrMalformed, i+2, rec[0], rec[1])
		}
		r := Row{Iteration: it, Samples: samples, Values: make([]float64, len(c.Metrics))}
		for j := range c.Metrics {
			if r.Values[j], err = strconv.ParseFloat(rec[2+j], 64); err != nil {
				return nil, fmt.Errorf("%w: line %d: %s %q is not a number", ErrMalformed, i+2, c.Metrics[j], rec[2+j])
			}
		}
		c.Rows = append(c.Rows, r)
	}
	return c, nil
}

// Bytes writes the curve as curve.csv: the header, then one row per Row,
// metric values as strconv.FormatFloat 'g' -1 writes them (what Parse
// reads back bit for bit).
func (c *Curve) Bytes() []byte {
	var b bytes.Buffer
	b.WriteString("iteration,samples")
	for _, m := range c.Metrics {
		b.WriteString("," + m)
	}
	b.WriteByte('\n')
	for _, r := range c.Rows {
		b.WriteString(strconv.FormatInt(r.Iteration, 10) + "," + strconv.FormatInt(r.Samples, 10))
		for _, v := range r.Values {
			b.WriteString("," + strconv.FormatFloat(v, 'g', -1, 64))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Column returns one column as numbers: "iteration", "samples" or a
// metric's name.
func (c *Curve) Column(name string) ([]float64, error) {
	out := make([]float64, len(c.Rows))
	switch j := slices.Index(c.Metrics, name); {
	case name == "iteration":
		for i, r := range c.Rows {
			out[i] = float64(r.Iteration)
		}
	case name == "samples":
		for i, r := range c.Rows {
			out[i] = float64(r.Samples)
		}
	case j >= 0:
		for i, r := range c.Rows {
			out[i] = r.Values[j]
		}
	default:
		return nil, fmt.Errorf("%w: %q (the curve has iteration, samples and %v)", ErrNoColumn, name, c.Metrics)
	}
	return out, nil
}
