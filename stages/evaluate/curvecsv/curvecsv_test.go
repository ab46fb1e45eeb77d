package curvecsv

import (
	"errors"
	"math"
	"testing"
)

// Parse reads every row and column bit for bit, NaN and infinities
// included, and Column gives iterations, samples and metrics as numbers.
func TestParse(t *testing.T) {
	data := "iteration,samples,test_loss,train_loss\n" +
		"0,0,0.30000000000000004,NaN\n" +
		"7,1280,+Inf,-0\n" +
		"9007199254740993,9223372036854775807,5e-324,-Inf\n"
	c, err := Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Metrics) != 2 || c.Metrics[0] != "test_loss" || len(c.Rows) != 3 {
		t.Fatalf("parsed %+v", c)
	}
	tenth, fifth := 0.1, 0.2
	want := [][]float64{{tenth + fifth, math.NaN()}, {math.Inf(1), math.Copysign(0, -1)}, {5e-324, math.Inf(-1)}}
	for i, r := range c.Rows {
		for j, v := range r.Values {
			if math.Float64bits(v) != math.Float64bits(want[i][j]) {
				t.Errorf("row %d column %d: %v, want %v", i, j, v, want[i][j])
			}
		}
	}
	if c.Rows[2].Iteration != 9007199254740993 || c.Rows[2].Samples != math.MaxInt64 {
		t.Errorf("integers: %+v", c.Rows[2])
	}
	s, err := c.Column("samples")
	if err != nil || s[1] != 1280 {
		t.Errorf("samples %v, %v", s, err)
	}
	l, err := c.Column("train_loss")
	if err != nil || !math.IsInf(l[2], -1) {
		t.Errorf("train_loss %v, %v", l, err)
	}
	if _, err := c.Column("return"); !errors.Is(err, ErrNoColumn) {
		t.Errorf("a missing column: %v", err)
	}
	if got := string(c.Bytes()); got != data {
		t.Errorf("Bytes of the parsed curve:\n%s\nwant the file it was parsed from:\n%s", got, data)
	}
}

func TestParseRefusesMalformed(t *testing.T) {
	for name, data := range map[string]string{
		"empty":         "",
		"header":        "samples,iteration,loss\n",
		"short header":  "iteration\n",
		"short row":     "iteration,samples,loss\n1,2\n",
		"long row":      "iteration,samples,loss\n1,2,3,4\n",
		"float samples": "iteration,samples,loss\n1,2.5,3\n",
		"not a number":  "iteration,samples,loss\n1,2,three\n",
		"bare quote":    "iteration,samples,loss\n1,2,\"3\n",
		"empty samples": "iteration,samples,loss\n1,,3\n",
	} {
		if _, err := Parse([]byte(data)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}
