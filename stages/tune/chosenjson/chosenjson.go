package chosenjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// ErrMalformed is returned when data is not a chosen.json: not a JSON
// object, a field of the wrong type, a field this package does not know, or
// no "params".
var ErrMalformed = errors.New("chosenjson: malformed chosen.json")

// Chosen is a parsed chosen.json.
type Chosen struct {
	// Params are the hyperparameters the train tasks use, each as its JSON
	// text (numbers, strings, booleans, lists).
	Params    map[string]json.RawMessage `json:"params"`
	Point     int                        `json:"point"`
	ScoreName string                     `json:"score_name"`
	Select    string                     `json:"select"`
	Score     Float                      `json:"score"`
	Seeds     []uint64                   `json:"seeds"`
	// Carried and CarriedFrom: the hyperparameters laid under Params from
	// another tune task's choice.
	Carried     map[string]json.RawMessage `json:"carried,omitempty"`
	CarriedFrom string                     `json:"carried_from,omitempty"`
	Search      *Search                    `json:"search,omitempty"`
	// Reference is the paper's choice when the stage names one;
	// ReferencePoint is its grid index (-1: not on the grid) and
	// ReferenceScore its mean there.
	Reference      map[string]json.RawMessage `json:"reference,omitempty"`
	ReferencePoint *int                       `json:"reference_point,omitempty"`
	ReferenceScore *Float                     `json:"reference_score,omitempty"`
}

// Search is how a tune task with extension rounds searched.
type Search struct {
	Rounds   int         `json:"rounds"`
	Extended []Extension `json:"extended,omitempty"`
	Stopped  string      `json:"stopped"`
}

// Extension is one value an extension round added beyond an edge of an
// axis ("smallest" or "largest").
type Extension struct {
	Round int             `json:"round"`
	Axis  string          `json:"axis"`
	Value json.RawMessage `json:"value"`
	Edge  string          `json:"edge"`
}

// Float is a float64 that chosen.json writes as a JSON number, or as the
// string "NaN", "+Inf" or "-Inf".
type Float float64

// UnmarshalJSON reads a number or one of the three strings.
func (f *Float) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(math.IsNaN(v) || math.IsInf(v, 0)) {
			return fmt.Errorf("score %q is neither a number nor NaN or ±Inf", s)
		}
		*f = Float(v)
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = Float(v)
	return nil
}

// MarshalJSON writes what the tune stage writes.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return json.Marshal(strconv.FormatFloat(v, 'g', -1, 64))
	}
	return json.Marshal(v)
}

// Parse reads a chosen.json.
func Parse(data []byte) (*Chosen, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	var c Chosen
	if err := d.Decode(&c); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if c.Params == nil {
		return nil, fmt.Errorf("%w: no \"params\"", ErrMalformed)
	}
	return &c, nil
}

// Number returns a parameter's value if it is a number.
func (c *Chosen) Number(name string) (float64, bool) {
	var v float64
	raw, ok := c.Params[name]
	if !ok || json.Unmarshal(raw, &v) != nil {
		return 0, false
	}
	return v, true
}

// Summary is one line saying what was chosen: the point, its
// hyperparameters, its mean score over the tuning seeds and the
// reference's, e.g. for the audit's and the browser's tune lines.
// A nil choice (no chosen.json recorded) says so.
func (c *Chosen) Summary() string {
	if c == nil {
		return "(no chosen.json recorded)"
	}
	params, _ := json.Marshal(c.Params)
	out := fmt.Sprintf("chose grid point %d %s, mean %s %s over tuning seeds %v", c.Point, params, c.ScoreName, strconv.FormatFloat(float64(c.Score), 'g', -1, 64), c.Seeds)
	if c.ReferencePoint != nil && *c.ReferencePoint >= 0 && c.ReferenceScore != nil {
		out += fmt.Sprintf("; the paper's choice is point %d (mean %s)", *c.ReferencePoint, strconv.FormatFloat(float64(*c.ReferenceScore), 'g', -1, 64))
	}
	return out
}
