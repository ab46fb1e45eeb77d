package dag

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/spf13/viper"

	"zorepro/pipeline/task"
)

// Stage is one decoded stage of dag.yaml (after the profile is applied).
type Stage struct {
	Name, Kind string
	Params     map[string]any
	Matrix     []Axis // sorted by axis name
	Inputs     []InputSpec
	Overrides  []Override
	Exclude    []map[string]string // coordinates of matrix points to drop
	Order      int                 // position in the file
	// Profiles, when not nil, lists the only profiles the stage is planned
	// in (a stage of one experiment, e.g. the crossover profile's); nil:
	// every profile.
	Profiles []string
	// setBy names, for each parameter a profile set, where: e.g.
	// "profiles.quick.stages.tune/lqr.params.grid".
	setBy map[string]string
}

// Axis is one matrix axis with its values in file order.
type Axis struct {
	Name   string
	Values []any
}

// InputSpec binds a slot to an upstream stage.
type InputSpec struct {
	Slot, Stage string
	Where       map[string][]string
	Optional    bool
}

// Override sets parameters for the tasks whose coordinates match When.
type Override struct {
	When   map[string]string
	Params map[string]any
	Field  string // where it is in the file, e.g. "profiles.quick.stages.tune/lqr.overrides[0]"
}

// Task is one planned task.
type Task struct {
	Path    string
	Stage   *Stage
	Kind    task.Kind
	Coords  []task.Coord
	Seed    uint64
	HasSeed bool
	Params  *task.Params
	Runner  task.Runner
	Inputs  map[string][]*Task // slot → upstream tasks, by path
	Deps    []*Task            // every upstream task, by index
	Index   int
	// Parent is the task this one is a part of (task.Splitter), or nil.
	// A part has the parent's stage, kind and seed, and draws from the
	// parent's streams.
	Parent *Task
	// Parts are this task's parts, in the Splitter's order (also its
	// inputs in the slot task.PartsSlot).
	Parts []*Task
}

// Coord returns the value of one coordinate.
func (t *Task) Coord(axis string) (string, bool) {
	for _, c := range t.Coords {
		if c.Axis == axis {
			return c.Value, true
		}
	}
	return "", false
}

// Plan is a fully expanded, validated dag.
type Plan struct {
	File, Profile string
	Stages        []*Stage // topological order
	Tasks         []*Task  // topological order
	byPath        map[string]*Task
}

// Task returns the task with the given path, or nil.
func (p *Plan) Task(path string) *Task { return p.byPath[path] }

var (
	nameRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*(/[a-z0-9][a-z0-9_-]*)*$`)
	keyRE   = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	valueRE = regexp.MustCompile(`^[A-Za-z0-9_.+-]+$`)
)

// Read reads a dag file through viper and returns its raw settings.
func Read(path string) (map[string]any, error) {
	v := viper.New()
	v.SetConfigFile(path)
	v.SetConfigType("yaml")
	if err := v.ReadInConfig(); err != nil {
		return nil, Problems{&Problem{File: path, Msg: "cannot read: " + err.Error()}}
	}
	raw := map[string]any{}
	for _, k := range []string{"version", "seeds", "stages", "profiles"} {
		if v.IsSet(k) {
			raw[k] = v.Get(k)
		}
	}
	for _, k := range v.AllKeys() {
		top := strings.SplitN(k, ".", 2)[0]
		if _, ok := raw[top]; !ok {
			raw[top] = v.Get(top)
		}
	}
	return raw, nil
}

// DefaultProfile is the profile a run uses unless told otherwise; a dag
// file need not define it.
const DefaultProfile = "paper"

// Load reads, validates and expands a dag file under a profile ("" for
// none). The profile must be defined in the file, except DefaultProfile.
func Load(path, profile string, kinds map[string]task.Kind) (*Plan, error) {
	return LoadWith(path, profile, kinds, Options{})
}

// Options tune LoadWith.
type Options struct {
	// Planned, if set, counts the tasks of the chosen profile as they are
	// planned, for a progress display of a long planning.
	Planned *atomic.Int64

	// Checked, if set, remembers dag files found free of problems under
	// every profile: a load of the same bytes checks the chosen profile
	// only (a smoke store's command then plans 257 tasks, not the seven
	// profiles' tens of thousands). Nil checks every profile every time.
	Checked Checked
}

// Checked remembers dag files, by the SHA-256 of their bytes, that were
// checked under every profile and found free of problems. What it
// remembers must be tied to the code that did the checking.
type Checked interface {
	Has(digest string) bool
	Add(digest string)
}

// LoadWith is Load with options.
func LoadWith(path, profile string, kinds map[string]task.Kind, opt Options) (*Plan, error) {
	var before []byte
	if opt.Checked != nil {
		before, _ = os.ReadFile(path)
	}
	raw, err := Read(path)
	if err != nil {
		return nil, err
	}
	// The digest names the bytes that were parsed: a file that changed
	// while it was read is checked in full and not remembered.
	digest := ""
	if opt.Checked != nil {
		if after, err := os.ReadFile(path); err == nil && bytes.Equal(before, after) {
			sum := sha256.Sum256(after)
			digest = hex.EncodeToString(sum[:])
		}
	}
	if digest != "" && opt.Checked.Has(digest) {
		plan, ps := build(path, raw, profile, kinds, true, nil, opt.Planned)
		if len(ps) > 0 {
			return nil, ps
		}
		return plan, nil
	}
	plan, err := buildChecked(path, raw, profile, kinds, opt)
	if err == nil && digest != "" {
		opt.Checked.Add(digest)
	}
	return plan, err
}

// LoadProfile reads the dag file at path and expands it under profile
// alone, without checking the stages under the other profiles as Load
// does: for a worker, which runs one task of a plan that its coordinator
// loaded (and so checked) from the same file.
func LoadProfile(path, profile string, kinds map[string]task.Kind) (*Plan, error) {
	raw, err := Read(path)
	if err != nil {
		return nil, err
	}
	plan, ps := build(path, raw, profile, kinds, true, nil, nil)
	if len(ps) > 0 {
		return nil, ps
	}
	return plan, nil
}

type collector struct {
	file    string
	list    Problems
	seen    map[string]bool
	planned *atomic.Int64 // counts planned tasks (Options.Planned), or nil
	// perField counts the problems of each stage and field; past
	// maxPerField the rest are only counted (more), so that a mistake
	// every task repeats (a slot matching many tasks, in a matrix of a
	// million) is reported in a few lines.
	perField map[string]int
	more     []*Problem
}

// maxPerField is how many problems of one stage and field are listed.
const maxPerField = 10

func (c *collector) add(stage, field, format string, args ...any) {
	c.addErr(&Problem{File: c.file, Stage: stage, Field: field, Msg: fmt.Sprintf(format, args...)})
}

func (c *collector) addErr(err error) {
	if c.seen == nil {
		c.seen, c.perField = map[string]bool{}, map[string]int{}
	}
	if c.seen[err.Error()] {
		return
	}
	c.seen[err.Error()] = true
	var p *Problem
	if errors.As(err, &p) {
		key := p.Stage + "\x00" + p.Field
		if c.perField[key]++; c.perField[key] > maxPerField {
			if c.perField[key] == maxPerField+1 {
				c.more = append(c.more, &Problem{File: p.File, Stage: p.Stage, Field: p.Field})
			}
			return
		}
	}
	c.list = append(c.list, err)
}

// problems returns the problems found, with one line per stage and field
// whose problems were too many to list.
func (c *collector) problems() Problems {
	out := c.list
	for _, m := range c.more {
		n := c.perField[m.Stage+"\x00"+m.Field] - maxPerField
		out = append(out, &Problem{File: m.File, Stage: m.Stage, Field: m.Field, Msg: fmt.Sprintf("and %d more problems like those above", n)})
	}
	return out
}

// Build validates raw settings (as from Read) and expands them under
// profile. The stages' parameters are checked under every other profile
// too, and without one: a broken dag file is broken whichever profile is
// chosen (a bad base value does not pass because the chosen profile
// happens to override it). A problem found only under another profile
// names it.
func Build(file string, raw map[string]any, profile string, kinds map[string]task.Kind) (*Plan, error) {
	return buildChecked(file, raw, profile, kinds, Options{})
}

func buildChecked(file string, raw map[string]any, profile string, kinds map[string]task.Kind, opt Options) (*Plan, error) {
	plan, ps := build(file, raw, profile, kinds, true, nil, opt.Planned)
	seen := map[string]bool{}
	for _, p := range ps {
		seen[p.Error()] = true
	}
	others := []string{""}
	if m := asMap(raw["profiles"]); m != nil {
		others = append(others, sortedKeys(m)...)
	}
	for _, other := range others {
		if other == profile || other == DefaultProfile && profile == "" || other == "" && profile == DefaultProfile {
			continue
		}
		// The parts' parameters derive from the stage's, checked here; a
		// stage the other profile leaves as the chosen one has it was
		// checked already, and is not planned again.
		_, ops := build(file, raw, other, kinds, false, plan, nil)
		for _, p := range ops {
			if !seen[p.Error()] {
				seen[p.Error()] = true
				ps = append(ps, &otherProfileError{profile: other, err: p})
			}
		}
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return plan, nil
}

// otherProfileError is a problem found under another profile than the
// one chosen.
type otherProfileError struct {
	profile string
	err     error
}

func (e *otherProfileError) Error() string {
	if e.profile == "" {
		return e.err.Error() + " (in the base parameters, before any profile)"
	}
	return fmt.Sprintf("%s (under profile %s)", e.err, e.profile)
}

func (e *otherProfileError) Unwrap() error { return e.err }

// build validates and expands raw under one profile.
// build expands raw under profile; parts says whether to plan the parts of
// splitting tasks (not needed to validate another profile).
func build(file string, raw map[string]any, profile string, kinds map[string]task.Kind, parts bool, checked *Plan, planned *atomic.Int64) (*Plan, Problems) {
	c := &collector{file: file, planned: planned}
	for _, k := range sortedKeys(raw) {
		switch k {
		case "version", "seeds", "tables", "stages", "profiles":
		default:
			c.add("", k, "unknown top-level field (known: version, seeds, tables, stages, profiles)")
		}
	}
	switch v, ok := raw["version"]; {
	case !ok:
		c.add("", "version", "missing (want 1)")
	default:
		if n, ok := asInt(v); !ok || n != 1 {
			c.add("", "version", "unsupported version %v (want 1)", v)
		}
	}
	if checkFinite(c, raw); len(c.list) > 0 {
		return nil, c.problems() // the other checks would only repeat it less clearly
	}
	seeds := decodeSeeds(c, "seeds", raw["seeds"])
	tables := decodeTables(c, raw["tables"])
	stages := decodeStages(c, raw["stages"], kinds, tables)
	profiles := asMap(raw["profiles"])
	if raw["profiles"] != nil && profiles == nil {
		c.add("", "profiles", "must be a mapping of profile name to overrides")
	}
	var only []string // the profile's planned list
	if profile != "" {
		pr, ok := profiles[profile]
		if !ok && profile == DefaultProfile {
			// The default profile needs no definition: it changes nothing.
		} else if !ok {
			names := sortedKeys(profiles)
			c.add("", "profiles", "unknown profile %q (known: %s)", profile, strings.Join(names, ", "))
		} else {
			only = applyProfile(c, profile, pr, seeds, stages, tables)
		}
	}
	// Other profiles are validated too, so a typo in one is caught early.
	for _, name := range sortedKeys(profiles) {
		if name != profile {
			checkProfile(c, name, profiles[name], stages, tables)
		}
	}
	if len(c.list) > 0 {
		return nil, c.problems()
	}
	stages = inProfiles(c, profile, profiles, only, stages)
	if len(c.list) > 0 {
		return nil, c.problems()
	}
	resolveRefs(c, seeds, stages)
	ordered := order(c, stages)
	if len(c.list) > 0 {
		return nil, c.problems()
	}
	plan := expand(c, file, profile, ordered, kinds, parts, checked)
	if len(c.list) > 0 {
		return nil, c.problems()
	}
	return plan, nil
}

// checkFinite reports every NaN or infinity anywhere in the file, by
// stage and field: no setting of a dag file may be one.
func checkFinite(c *collector, raw map[string]any) {
	var walk func(stage, field string, v any)
	walk = func(stage, field string, v any) {
		switch x := v.(type) {
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				c.add(stage, field, "must be a finite number, got %s", task.FormatFloat(x))
			}
		case map[string]any:
			for _, k := range sortedKeys(x) {
				walk(stage, field+"."+k, x[k])
			}
		case []any:
			for i, e := range x {
				walk(stage, fmt.Sprintf("%s[%d]", field, i), e)
			}
		}
	}
	for _, k := range sortedKeys(raw) {
		if k != "stages" {
			walk("", k, raw[k])
			continue
		}
		l, _ := raw[k].([]any)
		for i, st := range l {
			m := asMap(st)
			name, _ := m["name"].(string)
			if name == "" {
				walk("", fmt.Sprintf("stages[%d]", i), st)
				continue
			}
			for _, f := range sortedKeys(m) {
				walk(name, f, m[f])
			}
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func asMap(v any) map[string]any {
	switch m := v.(type) {
	case map[string]any:
		return m
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, x := range m {
			out[fmt.Sprint(k)] = x
		}
		return out
	}
	return nil
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case float64:
		if x == float64(int64(x)) {
			return int64(x), true
		}
	}
	return 0, false
}

func decodeSeeds(c *collector, field string, v any) map[string][]int64 {
	out := map[string][]int64{}
	if v == nil {
		return out
	}
	m := asMap(v)
	if m == nil {
		c.add("", field, "must be a mapping of name to a list of integers")
		return out
	}
	for _, name := range sortedKeys(m) {
		if !keyRE.MatchString(name) {
			c.add("", field+"."+name, "seed list names must match %s", keyRE)
		}
		l, ok := m[name].([]any)
		if !ok || len(l) == 0 {
			c.add("", field+"."+name, "must be a non-empty list of integers")
			continue
		}
		for i, x := range l {
			n, ok := asInt(x)
			if !ok || n < 0 {
				c.add("", fmt.Sprintf("%s.%s[%d]", field, name, i), "%v is not a non-negative integer", x)
				continue
			}
			out[name] = append(out[name], n)
		}
	}
	return out
}

func decodeStages(c *collector, v any, kinds map[string]task.Kind, tables map[string]Table) []*Stage {
	l, ok := v.([]any)
	if !ok || len(l) == 0 {
		c.add("", "stages", "must be a non-empty list of stages")
		return nil
	}
	var out []*Stage
	names := map[string]int{}
	for i, x := range l {
		m := asMap(x)
		field := fmt.Sprintf("stages[%d]", i)
		if m == nil {
			c.add("", field, "must be a mapping")
			continue
		}
		s := &Stage{Order: i}
		name, _ := m["name"].(string)
		if name == "" {
			c.add("", field+".name", "missing")
			name = field
		} else if !nameRE.MatchString(name) {
			c.add(name, "name", "must be lowercase path segments of [a-z0-9_-] separated by /")
		}
		s.Name = name
		if j, dup := names[name]; dup {
			c.add(name, "name", "duplicate stage name (also stages[%d])", j)
		}
		names[name] = i
		for _, k := range sortedKeys(m) {
			switch k {
			case "name", "kind", "params", "matrix", "inputs", "overrides", "table_overrides", "exclude", "profiles":
			default:
				c.add(name, k, "unknown field (known: name, kind, params, matrix, inputs, overrides, table_overrides, exclude, profiles)")
			}
		}
		s.Kind, _ = m["kind"].(string)
		if s.Kind == "" {
			c.add(name, "kind", "missing")
		} else if _, ok := kinds[s.Kind]; !ok {
			c.add(name, "kind", "unknown kind %q (known: %s)", s.Kind, strings.Join(sortedKeys(kinds), ", "))
		}
		s.Params = decodeParams(c, name, "params", m["params"])
		s.Matrix = decodeMatrix(c, name, "matrix", m["matrix"])
		s.Inputs = decodeInputs(c, name, m["inputs"])
		s.Overrides = decodeOverrides(c, name, "overrides", m["overrides"])
		s.Overrides = append(s.Overrides, decodeTableOverrides(c, name, "table_overrides", m["table_overrides"], tables)...)
		s.Exclude = decodeExclude(c, name, "exclude", m["exclude"])
		if v, ok := m["profiles"]; ok {
			s.Profiles = decodeNames(c, name, "profiles", v)
		}
		out = append(out, s)
	}
	return out
}

// decodeNames decodes a non-empty list of names.
func decodeNames(c *collector, stage, field string, v any) []string {
	l, ok := v.([]any)
	if !ok || len(l) == 0 {
		c.add(stage, field, "must be a non-empty list of profile names")
		return []string{}
	}
	out := make([]string, 0, len(l))
	for i, x := range l {
		n, ok := x.(string)
		if !ok || n == "" {
			c.add(stage, fmt.Sprintf("%s[%d]", field, i), "must be a profile name")
			continue
		}
		out = append(out, n)
	}
	return out
}

// inProfiles drops the stages not planned in profile (Stage.Profiles, and
// the profile's planned list when it has one), after checking that every
// profile a stage names exists, and the optional inputs from a stage
// dropped; a required input from one is an error.
func inProfiles(c *collector, profile string, profiles map[string]any, planned []string, stages []*Stage) []*Stage {
	if profile == "" {
		profile = DefaultProfile
	}
	dropped := map[string]*Stage{}
	var kept []*Stage
	for _, s := range stages {
		for i, p := range s.Profiles {
			if _, ok := profiles[p]; !ok && p != DefaultProfile {
				c.add(s.Name, fmt.Sprintf("profiles[%d]", i), "unknown profile %q (known: %s)", p, strings.Join(sortedKeys(profiles), ", "))
			}
		}
		if s.Profiles != nil && !slices.Contains(s.Profiles, profile) || planned != nil && !slices.Contains(planned, s.Name) {
			dropped[s.Name] = s
			continue
		}
		kept = append(kept, s)
	}
	for _, s := range kept {
		var ins []InputSpec
		for _, in := range s.Inputs {
			up := dropped[in.Stage]
			switch {
			case up == nil:
				ins = append(ins, in)
			case in.Optional: // e.g. tuned values over a stage's own: the stage's own serve
			default:
				why := "its profiles: " + strings.Join(up.Profiles, ", ")
				if up.Profiles == nil || slices.Contains(up.Profiles, profile) {
					why = "the profile's planned list leaves it out"
				}
				c.add(s.Name, "inputs."+in.Slot, "stage %q is not planned in profile %s (%s)", in.Stage, profile, why)
			}
		}
		s.Inputs = ins
	}
	return kept
}

func decodeParams(c *collector, stage, field string, v any) map[string]any {
	if v == nil {
		return map[string]any{}
	}
	m := asMap(v)
	if m == nil {
		c.add(stage, field, "must be a mapping")
		return map[string]any{}
	}
	for _, k := range sortedKeys(m) {
		if !keyRE.MatchString(k) {
			c.add(stage, field+"."+k, "parameter names must match %s", keyRE)
		}
	}
	// A copy: profiles are applied to it, and the raw settings are built
	// again under other profiles.
	return maps.Clone(m)
}

func decodeMatrix(c *collector, stage, field string, v any) []Axis {
	if v == nil {
		return nil
	}
	m := asMap(v)
	if m == nil {
		c.add(stage, field, "must be a mapping of axis to a list of values")
		return nil
	}
	var out []Axis
	for _, k := range sortedKeys(m) {
		f := field + "." + k
		if !keyRE.MatchString(k) {
			c.add(stage, f, "axis names must match %s", keyRE)
		}
		var vals []any
		switch x := m[k].(type) {
		case []any:
			vals = x
		case string:
			if strings.HasPrefix(x, "$") {
				vals = []any{x}
				break
			}
			c.add(stage, f, "must be a list of values or a $seed-list reference")
			continue
		default:
			c.add(stage, f, "must be a list of values or a $seed-list reference")
			continue
		}
		if len(vals) == 0 {
			c.add(stage, f, "must not be empty")
			continue
		}
		for i, x := range vals {
			switch y := x.(type) {
			case int, int64, float64, bool:
			case string:
				if !strings.HasPrefix(y, "$") && !valueRE.MatchString(y) {
					c.add(stage, fmt.Sprintf("%s[%d]", f, i), "%q may only contain letters, digits and _.+-", y)
				}
			default:
				c.add(stage, fmt.Sprintf("%s[%d]", f, i), "matrix values must be scalars, got %T", x)
			}
		}
		out = append(out, Axis{Name: k, Values: vals})
	}
	return out
}

func decodeInputs(c *collector, stage string, v any) []InputSpec {
	if v == nil {
		return nil
	}
	m := asMap(v)
	if m == nil {
		c.add(stage, "inputs", "must be a mapping of slot to stage")
		return nil
	}
	var out []InputSpec
	for _, slot := range sortedKeys(m) {
		// A slot takes one upstream stage, or a list of them (a slot that
		// takes many inputs, e.g. every figure of a report).
		entries, isList := m[slot].([]any)
		if !isList {
			entries = []any{m[slot]}
		} else if len(entries) == 0 {
			c.add(stage, "inputs."+slot, "must name at least one stage")
		}
		for i, entry := range entries {
			f := "inputs." + slot
			if isList {
				f = fmt.Sprintf("%s[%d]", f, i)
			}
			if in, ok := decodeInput(c, stage, f, slot, entry); ok {
				out = append(out, in)
			}
		}
	}
	return out
}

// decodeInput decodes one upstream of a slot: a stage name or {stage,
// where, optional}.
func decodeInput(c *collector, stage, f, slot string, v any) (InputSpec, bool) {
	in := InputSpec{Slot: slot}
	switch x := v.(type) {
	case string:
		in.Stage = x
	default:
		mm := asMap(x)
		if mm == nil {
			c.add(stage, f, "must be a stage name or {stage, where, optional}")
			return in, false
		}
		for _, k := range sortedKeys(mm) {
			switch k {
			case "stage", "where", "optional":
			default:
				c.add(stage, f+"."+k, "unknown field (known: stage, where, optional)")
			}
		}
		in.Stage, _ = mm["stage"].(string)
		if o, ok := mm["optional"]; ok {
			b, isBool := o.(bool)
			if !isBool {
				c.add(stage, f+".optional", "must be true or false")
			}
			in.Optional = b
		}
		if w := mm["where"]; w != nil {
			wm := asMap(w)
			if wm == nil {
				c.add(stage, f+".where", "must be a mapping of axis to value(s)")
			}
			in.Where = map[string][]string{}
			for _, ax := range sortedKeys(wm) {
				switch y := wm[ax].(type) {
				case []any:
					for _, z := range y {
						in.Where[ax] = append(in.Where[ax], scalarText(z))
					}
				default:
					in.Where[ax] = []string{scalarText(y)}
				}
			}
		}
	}
	if in.Stage == "" {
		c.add(stage, f, "missing upstream stage name")
		return in, false
	}
	return in, true
}

func decodeOverrides(c *collector, stage, field string, v any) []Override {
	var out []Override
	eachMapping(c, stage, field, v, []string{"when", "params"}, func(f string, m map[string]any) {
		o := Override{When: map[string]string{}, Field: f}
		wm := asMap(m["when"])
		if wm == nil || len(wm) == 0 {
			c.add(stage, f+".when", "must be a non-empty mapping of axis to value")
		}
		for _, k := range sortedKeys(wm) {
			o.When[k] = scalarText(wm[k])
		}
		o.Params = decodeParams(c, stage, f+".params", m["params"])
		out = append(out, o)
	})
	return out
}

// eachMapping calls each for every entry of the list v (absent: none),
// an entry being a mapping with the given fields, and reports a v that is
// not a list, an entry that is not a mapping and an unknown field, each
// named by its place (field[i].key).
func eachMapping(c *collector, stage, field string, v any, fields []string, each func(f string, m map[string]any)) {
	if v == nil {
		return
	}
	shape := "{" + strings.Join(fields, ", ") + "}"
	l, ok := v.([]any)
	if !ok {
		c.add(stage, field, "must be a list of %s", shape)
		return
	}
	for i, x := range l {
		f := fmt.Sprintf("%s[%d]", field, i)
		m := asMap(x)
		if m == nil {
			c.add(stage, f, "must be a mapping %s", shape)
			continue
		}
		for _, k := range sortedKeys(m) {
			if !slices.Contains(fields, k) {
				c.add(stage, f+"."+k, "unknown field (known: %s)", strings.Join(fields, ", "))
			}
		}
		each(f, m)
	}
}

func decodeExclude(c *collector, stage, field string, v any) []map[string]string {
	if v == nil {
		return nil
	}
	l, ok := v.([]any)
	if !ok {
		c.add(stage, field, "must be a list of {axis: value} mappings")
		return nil
	}
	var out []map[string]string
	for i, x := range l {
		m := asMap(x)
		if len(m) == 0 {
			c.add(stage, fmt.Sprintf("%s[%d]", field, i), "must be a non-empty mapping of axis to value")
			continue
		}
		e := map[string]string{}
		for _, k := range sortedKeys(m) {
			e[k] = scalarText(m[k])
		}
		out = append(out, e)
	}
	return out
}

// scalarText is the canonical text of a coordinate value.
func scalarText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return task.FormatFloat(x)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

func stageByName(stages []*Stage) map[string]*Stage {
	m := make(map[string]*Stage, len(stages))
	for _, s := range stages {
		m[s.Name] = s
	}
	return m
}

func checkProfile(c *collector, name string, v any, stages []*Stage, tables map[string]Table) {
	applyProfile(c, name, v, nil, cloneStages(stages), tables)
}

func cloneStages(stages []*Stage) []*Stage {
	out := make([]*Stage, len(stages))
	for i, s := range stages {
		cp := *s
		cp.Params = maps.Clone(s.Params)
		cp.Matrix = slices.Clone(s.Matrix)
		cp.Overrides = slices.Clone(s.Overrides)
		cp.setBy = maps.Clone(s.setBy)
		out[i] = &cp
	}
	return out
}

// applyProfile patches stages with a profile's seeds and stage overrides
// and returns its "planned" list (nil when it plans every stage).
func applyProfile(c *collector, name string, v any, seeds map[string][]int64, stages []*Stage, tables map[string]Table) (planned []string) {
	field := "profiles." + name
	m := asMap(v)
	if m == nil {
		c.add("", field, "must be a mapping {seeds, stages, planned}")
		return nil
	}
	for _, k := range sortedKeys(m) {
		if k != "seeds" && k != "stages" && k != "planned" {
			c.add("", field+"."+k, "unknown field (known: seeds, stages, planned)")
		}
	}
	ps := decodeSeeds(c, field+".seeds", m["seeds"])
	for _, k := range sortedKeys(ps) {
		if seeds != nil {
			seeds[k] = ps[k]
		}
	}
	byName := stageByName(stages)
	if v, ok := m["planned"]; ok {
		planned = decodeNames(c, "", field+".planned", v)
		for i, sn := range planned {
			if byName[sn] == nil {
				c.add("", fmt.Sprintf("%s.planned[%d]", field, i), "unknown stage %q", sn)
			}
		}
	}
	sm := asMap(m["stages"])
	if m["stages"] != nil && sm == nil {
		c.add("", field+".stages", "must be a mapping of stage name to overrides")
	}
	for _, sn := range sortedKeys(sm) {
		f := field + ".stages." + sn
		s, ok := byName[sn]
		if !ok {
			c.add("", f, "unknown stage %q", sn)
			continue
		}
		patch := asMap(sm[sn])
		if patch == nil {
			c.add(sn, f, "must be a mapping {params, matrix, overrides}")
			continue
		}
		for _, k := range sortedKeys(patch) {
			switch k {
			case "params", "matrix", "overrides", "table_overrides", "exclude", "inputs":
			default:
				c.add(sn, f+"."+k, "unknown field (known: params, matrix, overrides, table_overrides, exclude, inputs)")
			}
		}
		if patch["inputs"] != nil { // the slots it names replace the stage's
			ins := decodeInputs(c, sn, patch["inputs"])
			s.Inputs = slices.DeleteFunc(slices.Clone(s.Inputs), func(in InputSpec) bool {
				return slices.ContainsFunc(ins, func(p InputSpec) bool { return p.Slot == in.Slot })
			})
			s.Inputs = append(s.Inputs, ins...)
		}
		s.Exclude = append(s.Exclude, decodeExclude(c, sn, f+".exclude", patch["exclude"])...)
		for k, pv := range decodeParams(c, sn, f+".params", patch["params"]) {
			s.Params[k] = pv
			if s.setBy == nil {
				s.setBy = map[string]string{}
			}
			s.setBy[k] = f + ".params." + k
		}
		for _, ax := range decodeMatrix(c, sn, f+".matrix", patch["matrix"]) {
			i := slices.IndexFunc(s.Matrix, func(a Axis) bool { return a.Name == ax.Name })
			if i < 0 {
				c.add(sn, f+".matrix."+ax.Name, "profile may only narrow or change existing axes; stage has no axis %q", ax.Name)
				continue
			}
			s.Matrix[i] = ax
		}
		s.Overrides = append(s.Overrides, decodeOverrides(c, sn, f+".overrides", patch["overrides"])...)
		s.Overrides = append(s.Overrides, decodeTableOverrides(c, sn, f+".table_overrides", patch["table_overrides"], tables)...)
	}
	return planned
}

// resolveRefs replaces "$name" seed-list references in matrices, params
// and where-clauses.
func resolveRefs(c *collector, seeds map[string][]int64, stages []*Stage) {
	expand := func(stage, field string, vals []any) []any {
		var out []any
		for _, v := range vals {
			s, ok := v.(string)
			if !ok || !strings.HasPrefix(s, "$") {
				out = append(out, v)
				continue
			}
			l, ok := seeds[s[1:]]
			if !ok {
				c.add(stage, field, "unknown seed list %q (known: %s)", s, strings.Join(sortedKeys(seeds), ", "))
				continue
			}
			for _, n := range l {
				out = append(out, int(n))
			}
		}
		return out
	}
	for _, s := range stages {
		for i := range s.Matrix {
			s.Matrix[i].Values = expand(s.Name, "matrix."+s.Matrix[i].Name, s.Matrix[i].Values)
		}
		for _, k := range sortedKeys(s.Params) {
			switch v := s.Params[k].(type) {
			case string:
				if strings.HasPrefix(v, "$") {
					s.Params[k] = expand(s.Name, "params."+k, []any{v})
				}
			case []any:
				s.Params[k] = expand(s.Name, "params."+k, v)
			}
		}
		for j := range s.Inputs {
			for ax, vals := range s.Inputs[j].Where {
				var any_ []any
				for _, v := range vals {
					any_ = append(any_, v)
				}
				var texts []string
				for _, v := range expand(s.Name, "inputs."+s.Inputs[j].Slot+".where."+ax, any_) {
					texts = append(texts, scalarText(v))
				}
				s.Inputs[j].Where[ax] = texts
			}
		}
	}
}

// order checks inputs (dangling references, slots, cycles) and returns the
// stages in topological order, ties broken by file order.
func order(c *collector, stages []*Stage) []*Stage {
	byName := stageByName(stages)
	for _, s := range stages {
		for _, in := range s.Inputs {
			up, ok := byName[in.Stage]
			if !ok {
				c.add(s.Name, "inputs."+in.Slot, "unknown stage %q", in.Stage)
				continue
			}
			if up == s {
				c.add(s.Name, "inputs."+in.Slot, "a stage cannot take its own output")
			}
			for _, ax := range sortedKeys(in.Where) {
				if !slices.ContainsFunc(up.Matrix, func(a Axis) bool { return a.Name == ax }) {
					c.add(s.Name, "inputs."+in.Slot+".where."+ax, "stage %q has no axis %q", up.Name, ax)
				}
			}
		}
	}
	if len(c.list) > 0 {
		return nil
	}
	// Cycle detection by DFS in file order; report each cycle once.
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var visit func(s *Stage)
	visit = func(s *Stage) {
		color[s.Name] = grey
		stack = append(stack, s.Name)
		for _, in := range s.Inputs {
			up := byName[in.Stage]
			switch color[up.Name] {
			case white:
				visit(up)
			case grey:
				i := slices.Index(stack, up.Name)
				cyc := append(slices.Clone(stack[i:]), up.Name)
				slices.Reverse(cyc)
				c.add(s.Name, "inputs."+in.Slot, "cycle: %s", strings.Join(cyc, " -> "))
			}
		}
		stack = stack[:len(stack)-1]
		color[s.Name] = black
	}
	for _, s := range stages {
		if color[s.Name] == white {
			visit(s)
		}
	}
	if len(c.list) > 0 {
		return nil
	}
	// Kahn's algorithm with a file-order tie break.
	indeg := map[string]int{}
	down := map[string][]*Stage{}
	for _, s := range stages {
		ups := map[string]bool{}
		for _, in := range s.Inputs {
			if !ups[in.Stage] {
				ups[in.Stage] = true
				indeg[s.Name]++
				down[in.Stage] = append(down[in.Stage], s)
			}
		}
	}
	var out []*Stage
	done := map[string]bool{}
	for len(out) < len(stages) {
		for _, s := range stages {
			if !done[s.Name] && indeg[s.Name] == 0 {
				done[s.Name] = true
				out = append(out, s)
				for _, d := range down[s.Name] {
					indeg[d.Name]--
				}
				break
			}
		}
	}
	return out
}

func expand(c *collector, file, profile string, stages []*Stage, kinds map[string]task.Kind, withParts bool, checked *Plan) *Plan {
	plan := &Plan{File: file, Profile: profile, Stages: stages, byPath: map[string]*Task{}}
	byStage := map[string][]*Task{}
	for _, s := range stages {
		x := &expander{c: c, plan: plan, file: file, s: s, kind: kinds[s.Kind], withParts: withParts}
		// A stage defined exactly as in a plan already checked has the same
		// tasks with the same parameters: they are expanded and bound (a
		// changed stage downstream binds to them), not planned again.
		x.again = checked != nil && sameStage(s, checked.stage(s.Name))
		x.checkStage()
		byStage[s.Name] = x.tasks()
	}
	b := &binder{byStage: byStage, index: map[string]map[string][]*Task{}, where: map[*InputSpec]map[string]map[string]bool{}}
	for _, t := range plan.Tasks {
		b.bind(c, t)
		if len(t.Parts) > 0 {
			t.Inputs[task.PartsSlot] = t.Parts
			t.Deps = append(t.Deps, t.Parts...)
			sort.Slice(t.Deps, func(i, j int) bool { return t.Deps[i].Index < t.Deps[j].Index })
		}
	}
	return plan
}

// expander expands one stage into the plan's tasks.
type expander struct {
	c         *collector
	plan      *Plan
	file      string
	s         *Stage
	kind      task.Kind
	withParts bool
	again     bool     // the stage was planned already in a checked plan
	implicit  []string // the matrix axes: parameters no accessor need read
}

// checkStage checks the stage's slots, axes, overrides and exclusions.
func (x *expander) checkStage() {
	c, s := x.c, x.s
	slots := map[string]task.Slot{}
	for _, sl := range x.kind.Slots() {
		slots[sl.Name] = sl
		if sl.Required && !slices.ContainsFunc(s.Inputs, func(in InputSpec) bool { return in.Slot == sl.Name }) {
			c.add(s.Name, "inputs."+sl.Name, "missing required input of kind %s", s.Kind)
		}
	}
	for _, in := range s.Inputs {
		if _, ok := slots[in.Slot]; !ok {
			c.add(s.Name, "inputs."+in.Slot, "kind %s has no input slot %q (known: %s)", s.Kind, in.Slot, strings.Join(sortedKeys(slots), ", "))
		}
	}
	axisNames := map[string]bool{}
	for _, ax := range s.Matrix {
		axisNames[ax.Name] = true
		x.implicit = append(x.implicit, ax.Name)
		if ax.Name == "seed" {
			for i, v := range ax.Values {
				if n, ok := asInt(v); !ok || n < 0 {
					c.add(s.Name, fmt.Sprintf("matrix.seed[%d]", i), "%v is not a non-negative integer", v)
				}
			}
		}
		seen := map[string]bool{}
		for _, v := range ax.Values {
			t := scalarText(v)
			if seen[t] {
				c.add(s.Name, "matrix."+ax.Name, "duplicate value %s", t)
			}
			seen[t] = true
		}
	}
	for _, o := range s.Overrides {
		for _, ax := range sortedKeys(o.When) {
			if !axisNames[ax] {
				c.add(s.Name, o.Field+".when."+ax, "stage has no axis %q", ax)
			}
		}
	}
	for i, ex := range s.Exclude {
		for _, ax := range sortedKeys(ex) {
			if !axisNames[ax] {
				c.add(s.Name, fmt.Sprintf("exclude[%d].%s", i, ax), "stage has no axis %q", ax)
			}
		}
	}
}

// excluded reports whether a matrix point is one of the stage's exclusions.
func (x *expander) excluded(coords []any) bool {
	for _, ex := range x.s.Exclude {
		match := true
		for i, ax := range x.s.Matrix {
			if v, ok := ex[ax.Name]; ok && v != scalarText(coords[i]) {
				match = false
			}
		}
		if match {
			return true
		}
	}
	return false
}

// tasks adds the stage's tasks (and their parts) to the plan and returns
// the stage's own tasks, in matrix order.
func (x *expander) tasks() []*Task {
	var out []*Task
	for _, coords := range product(x.s.Matrix) {
		if x.excluded(coords) {
			continue
		}
		t := x.task(coords)
		t.Index = len(x.plan.Tasks)
		x.plan.Tasks = append(x.plan.Tasks, t)
		x.plan.byPath[t.Path] = t
		out = append(out, t)
		if x.c.planned != nil {
			x.c.planned.Add(int64(1 + len(t.Parts)))
		}
	}
	if len(out) == 0 {
		x.c.add(x.s.Name, "exclude", "excludes every point of the matrix")
	}
	return out
}

// task makes the task at one matrix point and, unless the stage was
// planned already, plans it (its parameters, runner and parts).
func (x *expander) task(coords []any) *Task {
	c, s := x.c, x.s
	t := &Task{Stage: s, Kind: x.kind, Inputs: map[string][]*Task{}}
	var parts []string
	var vals map[string]any
	if !x.again {
		vals = maps.Clone(s.Params)
	}
	for i, ax := range s.Matrix {
		text := scalarText(coords[i])
		t.Coords = append(t.Coords, task.Coord{Axis: ax.Name, Value: text})
		parts = append(parts, ax.Name+"="+text)
		if ax.Name == "seed" {
			n, _ := asInt(coords[i])
			t.Seed, t.HasSeed = uint64(n), true
			continue
		}
		if _, clash := s.Params[ax.Name]; clash {
			c.add(s.Name, "params."+ax.Name, "also a matrix axis; set it in one place")
		}
		if vals != nil {
			vals[ax.Name] = coords[i]
		}
	}
	t.Path = strings.Join(append([]string{s.Name}, parts...), "/")
	if x.again {
		return t
	}
	setBy := s.setBy
	for _, o := range s.Overrides {
		if !matches(t, o.When) {
			continue
		}
		maps.Copy(vals, o.Params)
		if strings.HasPrefix(o.Field, "profiles.") {
			setBy = maps.Clone(setBy)
			if setBy == nil {
				setBy = map[string]string{}
			}
			for k := range o.Params {
				setBy[k] = o.Field + ".params." + k
			}
		}
	}
	t.Params = task.NewParams(x.file, s.Name, vals, x.implicit...)
	t.Runner = x.kind.Plan(t.Params)
	for _, e := range t.Params.Problems() {
		c.addErr(fromProfile(e, setBy))
	}
	if sp, ok := t.Runner.(task.Splitter); ok && x.withParts && t.Params.Err() == nil {
		addParts(c, x.plan, t, sp.Parts())
		for _, e := range t.Params.Problems() { // problems found planning the parts
			c.addErr(fromProfile(e, setBy))
		}
	}
	return t
}

// addParts plans the parts of t, before it in the plan: they are not tasks
// of its stage to downstream stages, only t's inputs.
func addParts(c *collector, plan *Plan, t *Task, parts []task.Part) {
	for _, part := range parts {
		segs := []string{t.Path}
		for _, co := range part.Coords {
			if !keyRE.MatchString(co.Axis) || !valueRE.MatchString(co.Value) {
				c.add(t.Stage.Name, "params", "part %s=%s of %s cannot name a task (axis [a-z][a-z0-9_]*, value [A-Za-z0-9_.+-]+)", co.Axis, co.Value, t.Path)
				return
			}
			segs = append(segs, co.Axis+"="+co.Value)
		}
		pt := &Task{
			Path: strings.Join(segs, "/"), Stage: t.Stage, Kind: t.Kind,
			Coords: append(slices.Clone(t.Coords), part.Coords...), Seed: t.Seed, HasSeed: t.HasSeed,
			Params: part.Params, Runner: part.Runner, Inputs: map[string][]*Task{}, Parent: t,
		}
		if plan.byPath[pt.Path] != nil {
			c.add(t.Stage.Name, "params", "two parts of %s are both named %s", t.Path, pt.Path)
			return
		}
		pt.Index = len(plan.Tasks)
		plan.Tasks = append(plan.Tasks, pt)
		plan.byPath[pt.Path] = pt
		t.Parts = append(t.Parts, pt)
	}
}

// fromProfile adds to a parameter problem where a profile set the
// parameter, if one did (setBy: parameter → its place in the file).
func fromProfile(err error, setBy map[string]string) error {
	var pe *task.Error
	if len(setBy) == 0 || !errors.As(err, &pe) {
		return err
	}
	name := strings.TrimPrefix(pe.Field, "params.")
	if i := strings.IndexAny(name, ".["); i >= 0 {
		name = name[:i]
	}
	where, ok := setBy[name]
	if !ok {
		return err
	}
	return &Problem{File: pe.File, Stage: pe.Stage, Field: pe.Field, Msg: pe.Msg + " (set by " + where + ")"}
}

// stage returns the plan's stage of that name, or nil.
func (p *Plan) stage(name string) *Stage {
	for _, s := range p.Stages {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// sameStage reports whether two stages are defined alike after profiles
// and seed lists are applied: the same tasks with the same parameters.
func sameStage(a, b *Stage) bool {
	return b != nil && a.Kind == b.Kind && reflect.DeepEqual(a.Params, b.Params) && reflect.DeepEqual(a.Matrix, b.Matrix) &&
		reflect.DeepEqual(a.Overrides, b.Overrides) && reflect.DeepEqual(a.Exclude, b.Exclude)
}

func matches(t *Task, when map[string]string) bool {
	for ax, v := range when {
		got, ok := t.Coord(ax)
		if !ok || got != v {
			return false
		}
	}
	return true
}

func product(axes []Axis) [][]any {
	out := [][]any{{}}
	for _, ax := range axes {
		var next [][]any
		for _, prefix := range out {
			for _, v := range ax.Values {
				next = append(next, append(slices.Clone(prefix), v))
			}
		}
		out = next
	}
	return out
}

// binder binds tasks to their upstream tasks through an index per
// upstream stage and set of shared axes, so that planning takes time
// linear in the number of tasks (a scan of every upstream task per task
// was quadratic: 49 s for 146,000 tasks).
type binder struct {
	byStage map[string][]*Task
	index   map[string]map[string][]*Task             // "stage\x00axes" → key values → tasks, in plan order
	where   map[*InputSpec]map[string]map[string]bool // an input's where clause as sets
}

// candidates returns the tasks of stage whose coordinates equal t's on
// every axis they share, except the axes in where (filtered by the caller).
func (b *binder) candidates(stage string, where map[string][]string, t *Task) []*Task {
	ups := b.byStage[stage]
	if len(ups) == 0 {
		return nil
	}
	var axes, vals []string
	for _, uc := range ups[0].Coords { // every task of a stage has its matrix's axes, in order
		if _, filtered := where[uc.Axis]; filtered {
			continue
		}
		if v, shared := t.Coord(uc.Axis); shared {
			axes, vals = append(axes, uc.Axis), append(vals, v)
		}
	}
	ik := stage + "\x00" + strings.Join(axes, "\x00")
	idx, ok := b.index[ik]
	if !ok {
		idx = map[string][]*Task{}
		for _, up := range ups {
			var k []string
			for _, a := range axes {
				v, _ := up.Coord(a)
				k = append(k, v)
			}
			key := strings.Join(k, "\x00")
			idx[key] = append(idx[key], up)
		}
		b.index[ik] = idx
	}
	return idx[strings.Join(vals, "\x00")]
}

func (b *binder) bind(c *collector, t *Task) {
	deps := map[int]*Task{}
	for i := range t.Stage.Inputs {
		in := &t.Stage.Inputs[i]
		slot := task.Slot{Name: in.Slot}
		for _, sl := range t.Kind.Slots() {
			if sl.Name == in.Slot {
				slot = sl
			}
		}
		where, ok := b.where[in]
		if !ok {
			where = map[string]map[string]bool{}
			for ax, allowed := range in.Where {
				where[ax] = map[string]bool{}
				for _, v := range allowed {
					where[ax][v] = true
				}
			}
			b.where[in] = where
		}
		var got []*Task
		for _, up := range b.candidates(in.Stage, in.Where, t) {
			ok := true
			for ax, allowed := range where {
				if v, has := up.Coord(ax); has && !allowed[v] {
					ok = false
					break
				}
			}
			if ok {
				got = append(got, up)
			}
		}
		sort.Slice(got, func(i, j int) bool { return got[i].Path < got[j].Path })
		field := "inputs." + in.Slot
		switch {
		case len(got) == 0 && !in.Optional:
			c.add(t.Stage.Name, field, "no task of stage %q matches %s", in.Stage, t.Path)
		case len(got) > 1 && !slot.Many:
			c.add(t.Stage.Name, field, "%d tasks of stage %q match %s but the slot takes one (add a matrix axis or a where clause)", len(got), in.Stage, t.Path)
			continue // the plan is invalid: its inputs are not kept
		}
		t.Inputs[in.Slot] = append(t.Inputs[in.Slot], got...)
		if n := len(t.Inputs[in.Slot]); n > 1 && !slot.Many && len(got) < n {
			c.add(t.Stage.Name, "inputs."+in.Slot, "%d stages feed the slot but it takes one task", n)
		}
		for _, g := range got {
			deps[g.Index] = g
		}
	}
	for _, k := range slices.Sorted(maps.Keys(deps)) {
		t.Deps = append(t.Deps, deps[k])
	}
}
