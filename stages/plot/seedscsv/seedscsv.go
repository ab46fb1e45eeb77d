package seedscsv

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"zorepro/pipeline/task"
)

// Row is one seed's value at one x of one curve of one panel.
type Row struct {
	Panel, Curve string
	Seed         uint64
	X, Y         float64
}

// Header is the file's first line.
var Header = []string{"panel", "curve", "seed", "x", "y"}

// ErrMalformed is returned when data is not a -seeds.csv: its header, a
// row's field count or a number.
var ErrMalformed = errors.New("seedscsv: malformed per-seed CSV")

// Encode writes rows, in order, under the header.
func Encode(rows []Row) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(Header)
	for _, r := range rows {
		w.Write([]string{r.Panel, r.Curve, strconv.FormatUint(r.Seed, 10), task.FormatFloat(r.X), task.FormatFloat(r.Y)})
	}
	w.Flush()
	return buf.Bytes()
}

// Parse reads what Encode wrote, rows in file order.
func Parse(data []byte) ([]Row, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = len(Header)
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if len(recs) == 0 || !slices.Equal(recs[0], Header) {
		return nil, fmt.Errorf("%w: header is not panel,curve,seed,x,y", ErrMalformed)
	}
	out := make([]Row, 0, len(recs)-1)
	for i, rec := range recs[1:] {
		seed, err1 := strconv.ParseUint(rec[2], 10, 64)
		x, err2 := strconv.ParseFloat(rec[3], 64)
		y, err3 := strconv.ParseFloat(rec[4], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("%w: line %d: %v is not seed, x, y numbers", ErrMalformed, i+2, rec)
		}
		out = append(out, Row{Panel: rec[0], Curve: rec[1], Seed: seed, X: x, Y: y})
	}
	return out, nil
}
