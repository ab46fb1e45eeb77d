package seedscsv

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// Encode then Parse gives back every row bit for bit, NaN and infinities
// included, in order.
func TestRoundTrip(t *testing.T) {
	tenth, fifth := 0.1, 0.2 // at run time: 0.30000000000000004
	rows := []Row{
		{Panel: "10", Curve: "ars", Seed: 5488, X: 100, Y: tenth + fifth},
		{Panel: "10", Curve: "ars", Seed: 18446744073709551615, X: 3e5, Y: math.NaN()},
		{Panel: "", Curve: "exact", Seed: 1, X: 0.05, Y: math.Inf(-1)},
		{Panel: "a,b", Curve: `q"uote`, Seed: 2, X: math.Copysign(0, -1), Y: 5e-324},
	}
	data := Encode(rows)
	if !strings.HasPrefix(string(data), "panel,curve,seed,x,y\n10,ars,5488,100,0.30000000000000004\n") {
		t.Errorf("encoded:\n%s", data)
	}
	got, err := Parse(data)
	if err != nil || len(got) != len(rows) {
		t.Fatalf("parse: %d rows, %v", len(got), err)
	}
	for i := range rows {
		a, b := rows[i], got[i]
		if a.Panel != b.Panel || a.Curve != b.Curve || a.Seed != b.Seed || math.Float64bits(a.X) != math.Float64bits(b.X) || math.Float64bits(a.Y) != math.Float64bits(b.Y) {
			t.Errorf("row %d: %+v, parsed %+v", i, a, b)
		}
	}
}

func TestParseRefusesMalformed(t *testing.T) {
	for name, data := range map[string]string{
		"empty":       "",
		"header":      "panel,curve,seed,y,x\n",
		"not a seed":  "panel,curve,seed,x,y\n1,a,notanumber,1,2\n",
		"short row":   "panel,curve,seed,x,y\n1,a,3,1\n",
		"not a float": "panel,curve,seed,x,y\n1,a,3,1,two\n",
	} {
		if _, err := Parse([]byte(data)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}
