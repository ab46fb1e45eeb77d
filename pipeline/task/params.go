package task

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Params decodes one task's raw parameters (as read from dag.yaml after
// profile, matrix and override merging) into typed values, recording every
// problem with the file, stage and field it concerns, and the canonical
// text of every resolved value for the task's identity.
type Params struct {
	file, stage string
	vals        map[string]any
	used        map[string]bool
	resolved    map[string]string
	errs        []error
	prefix      string // "grid." for a Sub decoder
	subs        []*Params
	implicit    map[string]bool
}

// NewParams returns a decoder over vals; file and stage name the source in
// error messages. Implicit names (matrix coordinates) are never reported as
// unknown when no accessor reads them.
func NewParams(file, stage string, vals map[string]any, implicit ...string) *Params {
	if vals == nil {
		vals = map[string]any{}
	}
	p := &Params{file: file, stage: stage, vals: vals, used: map[string]bool{}, resolved: map[string]string{}}
	p.implicit = map[string]bool{}
	for _, k := range implicit {
		p.used[k] = true
		p.implicit[k] = true
	}
	return p
}

// Stage returns the stage name the parameters belong to.
func (p *Params) Stage() string { return p.stage }

// Error is one parameter problem.
type Error struct {
	File, Stage, Field, Msg string
	// Conflict marks a problem of a combination of values that are each
	// valid (e.g. top-b above the number of directions), recorded with
	// Conflictf: an error like any other, except that a tuning grid skips
	// the points where a conflict is the only problem.
	Conflict bool
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: stage %q: %s: %s", e.File, e.Stage, e.Field, e.Msg)
}

// Errorf records a problem with a field (for cross-field rules).
func (p *Params) Errorf(field, format string, args ...any) {
	p.errs = append(p.errs, &Error{File: p.file, Stage: p.stage, Field: "params." + p.prefix + field, Msg: fmt.Sprintf(format, args...)})
}

// Conflictf records a conflict between fields whose values are each valid
// (Error.Conflict), under the field named.
func (p *Params) Conflictf(field, format string, args ...any) {
	p.errs = append(p.errs, &Error{File: p.file, Stage: p.stage, Field: "params." + p.prefix + field, Msg: fmt.Sprintf(format, args...), Conflict: true})
}

// Err returns every problem found so far plus one per parameter that no
// accessor consumed (an unknown parameter), joined, or nil.
func (p *Params) Err() error { return errors.Join(p.Problems()...) }

// Problems returns the problems Err joins, one by one (those of
// sub-parameters in line): each a *Error naming its field.
func (p *Params) Problems() []error {
	errs := slices.Clone(p.errs)
	for _, s := range p.subs {
		errs = append(errs, s.Problems()...)
	}
	var unknown []string
	for k := range p.vals {
		if !p.used[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		errs = append(errs, &Error{File: p.file, Stage: p.stage, Field: "params." + p.prefix + k, Msg: "unknown parameter"})
	}
	return errs
}

// Resolved returns "name value" lines for every decoded parameter
// (defaults included), sorted by name.
func (p *Params) Resolved() []string {
	out := make([]string, 0, len(p.resolved))
	for k, v := range p.resolved {
		out = append(out, p.prefix+k+" "+v)
	}
	for _, s := range p.subs {
		out = append(out, s.Resolved()...)
	}
	sort.Strings(out)
	return out
}

// Has reports whether the raw parameters set name.
func (p *Params) Has(name string) bool {
	_, ok := p.vals[name]
	return ok
}

// Rule constrains a parameter.
type Rule struct {
	required bool
	def      any
	hasDef   bool
	lo, hi   float64
	loX, hiX bool // exclusive bounds
	hasLo    bool
	hasHi    bool
	oneOf    []string
	nonEmpty bool
}

// Opt configures a Rule.
type Opt func(*Rule)

// Required makes a missing parameter an error.
func Required() Opt { return func(r *Rule) { r.required = true } }

// Default sets the value used when the parameter is absent.
func Default(v any) Opt { return func(r *Rule) { r.def, r.hasDef = v, true } }

// Min requires value >= x.
func Min(x float64) Opt { return func(r *Rule) { r.lo, r.hasLo, r.loX = x, true, false } }

// Above requires value > x.
func Above(x float64) Opt { return func(r *Rule) { r.lo, r.hasLo, r.loX = x, true, true } }

// Max requires value <= x.
func Max(x float64) Opt { return func(r *Rule) { r.hi, r.hasHi, r.hiX = x, true, false } }

// Below requires value < x.
func Below(x float64) Opt { return func(r *Rule) { r.hi, r.hasHi, r.hiX = x, true, true } }

// OneOf restricts a string to the given choices.
func OneOf(choices ...string) Opt { return func(r *Rule) { r.oneOf = choices } }

// NonEmpty requires a list to have at least one element.
func NonEmpty() Opt { return func(r *Rule) { r.nonEmpty = true } }

func rules(opts []Opt) Rule {
	var r Rule
	for _, o := range opts {
		o(&r)
	}
	return r
}

func (r Rule) rangeText() string {
	var parts []string
	if r.hasLo {
		op := ">="
		if r.loX {
			op = ">"
		}
		parts = append(parts, op+" "+FormatFloat(r.lo))
	}
	if r.hasHi {
		op := "<="
		if r.hiX {
			op = "<"
		}
		parts = append(parts, op+" "+FormatFloat(r.hi))
	}
	return strings.Join(parts, " and ")
}

// integral states exclusive integer bounds as the inclusive ones an
// integer meets (> 0 as >= 1), so that messages read "must be >= 1".
func (r Rule) integral() Rule {
	if r.hasLo && r.loX && r.lo == math.Trunc(r.lo) {
		r.lo, r.loX = r.lo+1, false
	}
	if r.hasHi && r.hiX && r.hi == math.Trunc(r.hi) {
		r.hi, r.hiX = r.hi-1, false
	}
	return r
}

func (r Rule) inRange(x float64) bool {
	if math.IsNaN(x) {
		return false
	}
	if r.hasLo && (x < r.lo || (r.loX && x == r.lo)) {
		return false
	}
	if r.hasHi && (x > r.hi || (r.hiX && x == r.hi)) {
		return false
	}
	return true
}

// FormatFloat is the canonical text of a float in identities and tables.
func FormatFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// lookup returns the raw value, or the default; ok is false when absent
// without default (an error was recorded if required).
func (p *Params) lookup(name string, r Rule) (any, bool) {
	p.used[name] = true
	v, ok := p.vals[name]
	if ok && v != nil {
		return v, true
	}
	if r.hasDef {
		return r.def, true
	}
	if r.required {
		p.Errorf(name, "missing (required)")
	}
	return nil, false
}

func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, int32, uint64, float64, float32:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	case nil:
		return "empty"
	}
	return fmt.Sprintf("%T", v)
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case string:
		// Values from the environment or flags arrive as text.
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case uint64:
		if x > math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	case string:
		i, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return i, err == nil
	}
	return 0, false
}

func (p *Params) checkFloat(field string, x float64, r Rule) bool {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		p.Errorf(field, "must be a finite number, got %s", FormatFloat(x))
		return false
	}
	if !r.inRange(x) {
		p.Errorf(field, "must be %s, got %s", r.rangeText(), FormatFloat(x))
		return false
	}
	return true
}

// Float decodes a number.
func (p *Params) Float(name string, opts ...Opt) float64 {
	r := rules(opts)
	v, ok := p.lookup(name, r)
	if !ok {
		return 0
	}
	x, ok := toFloat(v)
	if !ok {
		p.Errorf(name, "must be a number, got %s", typeName(v))
		return 0
	}
	p.checkFloat(name, x, r)
	p.resolved[name] = FormatFloat(x)
	return x
}

// Int decodes an integer.
func (p *Params) Int(name string, opts ...Opt) int64 {
	r := rules(opts)
	v, ok := p.lookup(name, r)
	if !ok {
		return 0
	}
	x, ok := toInt(v)
	if !ok {
		got := typeName(v)
		if f, isNum := toFloat(v); isNum {
			got = FormatFloat(f)
		}
		p.Errorf(name, "must be an integer, got %s", got)
		return 0
	}
	p.checkFloat(name, float64(x), r.integral())
	p.resolved[name] = strconv.FormatInt(x, 10)
	return x
}

// String decodes a string.
func (p *Params) String(name string, opts ...Opt) string {
	r := rules(opts)
	v, ok := p.lookup(name, r)
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		p.Errorf(name, "must be a string, got %s", typeName(v))
		return ""
	}
	if len(r.oneOf) > 0 && !slices.Contains(r.oneOf, s) {
		p.Errorf(name, "%q is not one of %s", s, strings.Join(r.oneOf, ", "))
	}
	p.resolved[name] = strconv.Quote(s)
	return s
}

// Bool decodes a boolean.
func (p *Params) Bool(name string, opts ...Opt) bool {
	r := rules(opts)
	v, ok := p.lookup(name, r)
	if !ok {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		if s, isStr := v.(string); isStr {
			if pb, err := strconv.ParseBool(s); err == nil {
				b, ok = pb, true
			}
		}
	}
	if !ok {
		p.Errorf(name, "must be true or false, got %s", typeName(v))
		return false
	}
	p.resolved[name] = strconv.FormatBool(b)
	return b
}

func (p *Params) list(name string, r Rule) ([]any, bool) {
	v, ok := p.lookup(name, r)
	if !ok {
		return nil, false
	}
	switch l := v.(type) {
	case []any:
		if r.nonEmpty && len(l) == 0 {
			p.Errorf(name, "must not be empty")
			return nil, false
		}
		return l, true
	case []float64:
		out := make([]any, len(l))
		for i, x := range l {
			out[i] = x
		}
		return out, true
	case []int64:
		out := make([]any, len(l))
		for i, x := range l {
			out[i] = x
		}
		return out, true
	case []string:
		out := make([]any, len(l))
		for i, x := range l {
			out[i] = x
		}
		return out, true
	}
	p.Errorf(name, "must be a list, got %s", typeName(v))
	return nil, false
}

// Floats decodes a list of numbers; each element is checked against the
// range options.
func (p *Params) Floats(name string, opts ...Opt) []float64 {
	r := rules(opts)
	l, ok := p.list(name, r)
	if !ok {
		return nil
	}
	out := make([]float64, 0, len(l))
	texts := make([]string, 0, len(l))
	for i, v := range l {
		x, ok := toFloat(v)
		field := fmt.Sprintf("%s[%d]", name, i)
		if !ok {
			p.Errorf(field, "must be a number, got %s", typeName(v))
			continue
		}
		p.checkFloat(field, x, r)
		out = append(out, x)
		texts = append(texts, FormatFloat(x))
	}
	p.resolved[name] = "[" + strings.Join(texts, ",") + "]"
	return out
}

// Ints decodes a list of integers.
func (p *Params) Ints(name string, opts ...Opt) []int64 {
	r := rules(opts)
	l, ok := p.list(name, r)
	if !ok {
		return nil
	}
	out := make([]int64, 0, len(l))
	texts := make([]string, 0, len(l))
	for i, v := range l {
		x, ok := toInt(v)
		field := fmt.Sprintf("%s[%d]", name, i)
		if !ok {
			p.Errorf(field, "must be an integer, got %s", typeName(v))
			continue
		}
		p.checkFloat(field, float64(x), r.integral())
		out = append(out, x)
		texts = append(texts, strconv.FormatInt(x, 10))
	}
	p.resolved[name] = "[" + strings.Join(texts, ",") + "]"
	return out
}

// Strings decodes a list of strings.
func (p *Params) Strings(name string, opts ...Opt) []string {
	r := rules(opts)
	l, ok := p.list(name, r)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(l))
	texts := make([]string, 0, len(l))
	for i, v := range l {
		s, ok := v.(string)
		if !ok {
			p.Errorf(fmt.Sprintf("%s[%d]", name, i), "must be a string, got %s", typeName(v))
			continue
		}
		if len(r.oneOf) > 0 && !slices.Contains(r.oneOf, s) {
			p.Errorf(fmt.Sprintf("%s[%d]", name, i), "%q is not one of %s", s, strings.Join(r.oneOf, ", "))
		}
		out = append(out, s)
		texts = append(texts, strconv.Quote(s))
	}
	p.resolved[name] = "[" + strings.Join(texts, ",") + "]"
	return out
}

// Sub returns a decoder over a nested mapping parameter (e.g. a tuning
// grid). Its fields are reported as "name.field" and its resolved values
// are folded into the parent's as "name.field value". ok is false when the
// parameter is absent (and not required) or not a mapping.
func (p *Params) Sub(name string, opts ...Opt) (*Params, bool) {
	r := rules(opts)
	v, ok := p.lookup(name, r)
	if !ok {
		return nil, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		p.Errorf(name, "must be a mapping, got %s", typeName(v))
		return nil, false
	}
	sub := &Params{file: p.file, stage: p.stage, vals: m, used: map[string]bool{}, resolved: map[string]string{}, prefix: p.prefix + name + "."}
	p.subs = append(p.subs, sub)
	return sub, true
}

// Keys returns the raw parameter names, sorted, without the implicit ones
// (matrix coordinates), which a kind reads by name when it needs them.
func (p *Params) Keys() []string {
	out := make([]string, 0, len(p.vals))
	for k := range p.vals {
		if !p.implicit[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Peek returns a raw value without consuming it.
func (p *Params) Peek(name string) (any, bool) {
	v, ok := p.vals[name]
	return v, ok
}

// Raw consumes a raw value of any type; its canonical text (JSON with
// sorted keys) enters the resolved parameters.
func (p *Params) Raw(name string) (any, bool) {
	p.used[name] = true
	v, ok := p.vals[name]
	if ok {
		b, err := json.Marshal(v)
		if err != nil {
			p.Errorf(name, "cannot be encoded: %v", err)
		}
		p.resolved[name] = string(b)
	}
	return v, ok
}

// File returns the file the parameters came from.
func (p *Params) File() string { return p.file }

// Derive returns parameters from the same file and stage holding vals
// and p's implicit parameters (its matrix coordinates), still implicit:
// e.g. one tuning trial's parameters, made from its grid's.
func (p *Params) Derive(vals map[string]any) *Params {
	vals = maps.Clone(vals)
	implicit := make([]string, 0, len(p.implicit))
	for k := range p.implicit {
		vals[k] = p.vals[k]
		implicit = append(implicit, k)
	}
	sort.Strings(implicit)
	return NewParams(p.file, p.stage, vals, implicit...)
}
