package linreg

import (
	"math"
	"testing"
)

// SampleCost reads d and the method from the coordinates and gives the
// measured relative per-sample time (1 without d).
func TestSampleCost(t *testing.T) {
	coords := func(kv map[string]string) func(string) (string, bool) {
		return func(a string) (string, bool) { v, ok := kv[a]; return v, ok }
	}
	for _, c := range []struct {
		kv   map[string]string
		want float64
	}{
		{map[string]string{"d": "10", "method": "sgd"}, 1},
		{map[string]string{"d": "1000", "method": "sgd"}, 229},
		{map[string]string{"d": "100", "method": "ars"}, 4.84},
		{map[string]string{"d": "100", "method": "unknown"}, 4.84}, // ARS's table
		{map[string]string{"method": "sgd"}, 1},
		{map[string]string{"d": "x", "method": "sgd"}, 1},
	} {
		if got := (Env{}).SampleCost(coords(c.kv)); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%v: %g, want %g", c.kv, got, c.want)
		}
	}
}
