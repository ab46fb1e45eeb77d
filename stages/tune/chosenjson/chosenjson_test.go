package chosenjson

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// A choice with every field parses; NaN and infinite scores come back as
// numbers, and the summary names the point, its hyperparameters and the
// reference's score.
func TestParse(t *testing.T) {
	data := `{"params": {"alpha": 0.02, "kind": "a"}, "point": 3, "score_name": "return", "select": "max",
	  "score": "-Inf", "seeds": [283, 457], "reference": {"alpha": 0.03}, "reference_point": 1, "reference_score": 2.5,
	  "search": {"rounds": 1, "extended": [{"round": 1, "axis": "alpha", "value": 0.04, "edge": "largest"}], "stopped": "inside"}}`
	c, err := Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(float64(c.Score), -1) || *c.ReferencePoint != 1 || float64(*c.ReferenceScore) != 2.5 || c.Search.Extended[0].Edge != "largest" {
		t.Errorf("parsed %+v", c)
	}
	if a, ok := c.Number("alpha"); !ok || a != 0.02 {
		t.Errorf("alpha %v %v", a, ok)
	}
	if _, ok := c.Number("kind"); ok {
		t.Error("a string parameter read as a number")
	}
	want := `chose grid point 3 {"alpha":0.02,"kind":"a"}, mean return -Inf over tuning seeds [283 457]; the paper's choice is point 1 (mean 2.5)`
	if got := c.Summary(); got != want {
		t.Errorf("summary %q\nwant     %q", got, want)
	}
	var none *Chosen
	if !strings.Contains(none.Summary(), "no chosen.json") {
		t.Errorf("nil summary %q", none.Summary())
	}
}

func TestParseRefusesMalformed(t *testing.T) {
	for name, data := range map[string]string{
		"empty":         ``,
		"not an object": `[1]`,
		"no params":     `{"point": 1}`,
		"unknown field": `{"params": {}, "extra": 1}`,
		"string score":  `{"params": {}, "score": "high"}`,
		"finite string": `{"params": {}, "score": "1.5"}`,
		"seeds":         `{"params": {}, "seeds": ["a"]}`,
	} {
		if _, err := Parse([]byte(data)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}
