package dag_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zorepro/pipeline/dag"
	"zorepro/pipeline/task"
)

// fitKind stands in for a training kind with the constraints the real ones
// have: a positive step size, at least one direction, top-b <= directions.
type fitKind struct{}

func (fitKind) Name() string { return "fit" }
func (fitKind) Version() int { return 1 }
func (fitKind) Slots() []task.Slot {
	return []task.Slot{{Name: "data", Required: true}, {Name: "hyper"}}
}
func (fitKind) Plan(p *task.Params) task.Runner {
	p.Float("alpha", task.Required(), task.Above(0))
	n := p.Int("directions", task.Default(int64(10)), task.Min(1))
	top := p.Int("top", task.Default(int64(10)), task.Min(1))
	if top > n {
		p.Errorf("top", "%d is out of range (must be <= directions = %d)", top, n)
	}
	p.String("method", task.Default("ars"), task.OneOf("ars", "sgd"))
	if r, ok := p.Sub("reference"); ok { // as a tune kind marks a published point
		r.Float("alpha", task.Required(), task.Above(0))
	}
	return nopRunner{}
}

type genKind struct{}

func (genKind) Name() string       { return "gen" }
func (genKind) Version() int       { return 1 }
func (genKind) Slots() []task.Slot { return nil }
func (genKind) Plan(p *task.Params) task.Runner {
	p.Int("d", task.Default(int64(10)), task.Min(1))
	return nopRunner{}
}

type plotKind struct{}

func (plotKind) Name() string                    { return "show" }
func (plotKind) Version() int                    { return 1 }
func (plotKind) Slots() []task.Slot              { return []task.Slot{{Name: "curves", Required: true, Many: true}} }
func (plotKind) Plan(p *task.Params) task.Runner { return nopRunner{} }

type nopRunner struct{}

func (nopRunner) Components() []any                   { return nil }
func (nopRunner) Run(context.Context, task.Env) error { return nil }

var kinds = map[string]task.Kind{"fit": fitKind{}, "gen": genKind{}, "show": plotKind{}}

const good = `version: 1
seeds:
  eval: [1, 2]
stages:
  - name: data
    kind: gen
    matrix: {d: [10, 100], seed: $eval}
  - name: train
    kind: fit
    inputs: {data: data}
    matrix: {d: [10, 100], seed: $eval}
    params: {alpha: 0.03}
  - name: figure
    kind: show
    inputs: {curves: train}
profiles:
  paper: {}
  smoke:
    seeds: {eval: [1]}
    stages:
      train: {params: {alpha: 0.01}, matrix: {d: [10]}}
`

func write(t testing.TB, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dag.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestGoodFileExpands(t *testing.T) {
	plan, err := dag.Load(write(t, good), "paper", kinds)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, tk := range plan.Tasks {
		paths = append(paths, tk.Path)
	}
	want := "data/d=10/seed=1 data/d=10/seed=2 data/d=100/seed=1 data/d=100/seed=2 train/d=10/seed=1 train/d=10/seed=2 train/d=100/seed=1 train/d=100/seed=2 figure"
	if got := strings.Join(paths, " "); got != want {
		t.Fatalf("tasks:\n got %s\nwant %s", got, want)
	}
	fig := plan.Task("figure")
	if len(fig.Inputs["curves"]) != 4 || len(fig.Deps) != 4 {
		t.Fatalf("figure inputs = %d", len(fig.Inputs["curves"]))
	}
	tr := plan.Task("train/d=100/seed=2")
	if up := tr.Inputs["data"]; len(up) != 1 || up[0].Path != "data/d=100/seed=2" {
		t.Fatalf("train input = %v", up)
	}
	if !tr.HasSeed || tr.Seed != 2 {
		t.Fatalf("seed = %d %v", tr.Seed, tr.HasSeed)
	}
	if got := strings.Join(tr.Params.Resolved(), ";"); got != "alpha 0.03;directions 10;method \"ars\";top 10" {
		t.Fatalf("resolved = %s", got)
	}
	smoke, err := dag.Load(write(t, good), "smoke", kinds)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(smoke.Tasks); n != 2+1+1 {
		t.Fatalf("smoke has %d tasks, want 4", n)
	}
	if got := smoke.Task("train/d=10/seed=1").Params.Resolved()[0]; got != "alpha 0.01" {
		t.Fatalf("profile param = %s", got)
	}
}

// A slot that takes many tasks can be fed by a list of stages: their
// tasks in list order, each stage's sorted by path.
func TestInputListFeedsOneSlot(t *testing.T) {
	text := strings.Replace(good, "inputs: {curves: train}", "inputs: {curves: [train, {stage: data, where: {d: [100]}}]}", 1)
	plan, err := dag.Load(write(t, text), "paper", kinds)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range plan.Task("figure").Inputs["curves"] {
		got = append(got, in.Path)
	}
	want := "train/d=10/seed=1 train/d=10/seed=2 train/d=100/seed=1 train/d=100/seed=2 data/d=100/seed=1 data/d=100/seed=2"
	if strings.Join(got, " ") != want {
		t.Fatalf("inputs:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if n := len(plan.Task("figure").Deps); n != 6 {
		t.Errorf("%d deps, want 6", n)
	}
}

// tabled is the good file with a table and the train stage's
// table_overrides entries.
func tabled(entries ...string) string {
	text := strings.Replace(good, "stages:\n", "tables:\n  published:\n    columns: [d, seed, alpha, top]\n    rows:\n      - [10, 1, 0.05, 5]\n      - [100, 2, 0.07, 3]\nstages:\n", 1)
	return strings.Replace(text, "    params: {alpha: 0.03}\n", "    params: {alpha: 0.03}\n    table_overrides: ["+strings.Join(entries, ", ")+"]\n", 1)
}

// A table's rows are overrides: each row's match columns select the tasks
// and its set columns become their parameters (nested under into when
// given), exactly as the same overrides written out would.
func TestTableOverrides(t *testing.T) {
	plan, err := dag.Load(write(t, tabled("{table: published, match: [d, seed], set: [alpha, top]}", "{table: published, match: [d, seed], set: [alpha], into: reference}")), "paper", kinds)
	if err != nil {
		t.Fatal(err)
	}
	written := strings.Replace(good, "    params: {alpha: 0.03}\n", "    params: {alpha: 0.03}\n    overrides:\n"+
		"      - {when: {d: 10, seed: 1}, params: {alpha: 0.05, top: 5}}\n      - {when: {d: 100, seed: 2}, params: {alpha: 0.07, top: 3}}\n"+
		"      - {when: {d: 10, seed: 1}, params: {reference: {alpha: 0.05}}}\n      - {when: {d: 100, seed: 2}, params: {reference: {alpha: 0.07}}}\n", 1)
	same, err := dag.Load(write(t, written), "paper", kinds)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range plan.Tasks {
		if got, want := strings.Join(tk.Params.Resolved(), ";"), strings.Join(same.Task(tk.Path).Params.Resolved(), ";"); got != want {
			t.Errorf("%s: %s from the table, %s written out", tk.Path, got, want)
		}
	}
	if got := strings.Join(plan.Task("train/d=10/seed=1").Params.Resolved(), ";"); got != `alpha 0.05;directions 10;method "ars";reference.alpha 0.05;top 5` {
		t.Errorf("train/d=10/seed=1: %s", got)
	}
	if got := plan.Task("train/d=10/seed=2").Params.Resolved()[0]; got != "alpha 0.03" {
		t.Errorf("a task no row matches keeps the stage's value: %s", got)
	}
}

func TestBadInput(t *testing.T) {
	repl := func(old, new string) string {
		if !strings.Contains(good, old) {
			t.Fatalf("test bug: %q not in the good file", old)
		}
		return strings.Replace(good, old, new, 1)
	}
	cases := []struct {
		name, text, profile string
		want                []string
	}{
		{"missing version", repl("version: 1\n", ""), "", []string{"version: missing (want 1)"}},
		{"unsupported version", repl("version: 1", "version: 2"), "", []string{"version: unsupported version 2"}},
		{"unknown top-level field", good + "extra: 1\n", "", []string{"extra: unknown top-level field"}},
		{"stages not a list", "version: 1\nstages: {a: 1}\n", "", []string{"stages: must be a non-empty list"}},
		{"stage without name", repl("  - name: data\n", "  - kind_: x\n"), "", []string{"stages[0].name: missing"}},
		{"bad stage name", repl("name: train", "name: Train"), "", []string{`stage "Train": name: must be lowercase`}},
		{"duplicate stage", repl("name: figure", "name: train"), "", []string{`stage "train": name: duplicate stage name`}},
		{"unknown kind", repl("kind: show", "kind: draw"), "", []string{`stage "figure": kind: unknown kind "draw" (known: fit, gen, show)`}},
		{"unknown stage field", repl("    kind: show\n", "    kind: show\n    needs: [x]\n"), "", []string{`stage "figure": needs: unknown field`}},
		{"unknown parameter", repl("alpha: 0.03}", "alpha: 0.03, alpah: 1}"), "", []string{`stage "train": params.alpah: unknown parameter`}},
		{"wrong type", repl("alpha: 0.03}", "alpha: fast}"), "", []string{`stage "train": params.alpha: must be a number, got a string`}},
		{"negative step size", repl("alpha: 0.03}", "alpha: -0.1}"), "", []string{`stage "train": params.alpha: must be > 0, got -0.1`}},
		{"zero directions", repl("alpha: 0.03}", "alpha: 0.03, directions: 0, top: 0}"), "", []string{`params.directions: must be >= 1, got 0`}},
		{"top above directions", repl("alpha: 0.03}", "alpha: 0.03, directions: 5, top: 8}"), "", []string{`stage "train": params.top: 8 is out of range (must be <= directions = 5)`}},
		{"bad choice", repl("alpha: 0.03}", "alpha: 0.03, method: newton}"), "", []string{`params.method: "newton" is not one of ars, sgd`}},
		{"cycle", repl("    inputs: {data: data}\n", "    inputs: {data: data, hyper: figure}\n"), "", []string{"cycle: train -> figure -> train"}},
		{"dangling input", repl("inputs: {curves: train}", "inputs: {curves: trian}"), "", []string{`stage "figure": inputs.curves: unknown stage "trian"`}},
		{"missing required input", repl("    inputs: {curves: train}\n", ""), "", []string{`stage "figure": inputs.curves: missing required input of kind show`}},
		{"unknown slot", repl("inputs: {curves: train}", "inputs: {curves: train, extra: data}"), "", []string{`stage "figure": inputs.extra: kind show has no input slot "extra" (known: curves)`}},
		{"self input", repl("inputs: {curves: train}", "inputs: {curves: figure}"), "", []string{"a stage cannot take its own output"}},
		{"unknown seed list", repl("seed: $eval}\n  - name: train", "seed: $evl}\n  - name: train"), "", []string{`stage "data": matrix.seed: unknown seed list "$evl"`}},
		{"empty axis", repl("matrix: {d: [10, 100], seed: $eval}\n  - name: train", "matrix: {d: [], seed: $eval}\n  - name: train"), "", []string{`stage "data": matrix.d: must not be empty`}},
		{"non-scalar axis value", repl("matrix: {d: [10, 100], seed: $eval}\n  - name: train", "matrix: {d: [[10]], seed: $eval}\n  - name: train"), "", []string{`stage "data": matrix.d[0]: matrix values must be scalars`}},
		{"duplicate axis value", repl("matrix: {d: [10, 100], seed: $eval}\n  - name: train", "matrix: {d: [10, 10], seed: $eval}\n  - name: train"), "", []string{`stage "data": matrix.d: duplicate value 10`}},
		{"negative seed", repl("eval: [1, 2]", "eval: [1, -2]"), "", []string{"seeds.eval[1]: -2 is not a non-negative integer"}},
		// Non-finite numbers anywhere are named as such, by stage and field
		// (issue 27: in a list they were "cannot be encoded: json:
		// unsupported value").
		{"NaN in a list parameter", repl("alpha: 0.03}", "alpha: 0.03, grid: {alpha: [0.1, .nan]}}"), "", []string{`stage "train": params.grid.alpha[1]: must be a finite number, got NaN`}},
		{"infinity in a profile override", repl("params: {alpha: 0.01}", "params: {alpha: -.inf}"), "smoke", []string{`profiles.smoke.stages.train.params.alpha: must be a finite number, got -Inf`}},
		// A bad value a profile sets names the profile and the field that
		// set it, under the chosen profile too.
		{"bad value set by the chosen profile", repl("params: {alpha: 0.01}", "params: {alpha: -0.01}"), "smoke",
			[]string{`stage "train": params.alpha: must be > 0, got -0.01 (set by profiles.smoke.stages.train.params.alpha)`}},
		{"bad value set by a profile override", repl("train: {params: {alpha: 0.01}, matrix: {d: [10]}}", "train: {matrix: {d: [10]}, overrides: [{when: {d: 10}, params: {top: 20}}]}"), "smoke",
			[]string{`stage "train": params.top: 20 is out of range (must be <= directions = 10) (set by profiles.smoke.stages.train.overrides[0].params.top)`}},
		{"unknown profile", good, "fast", []string{`profiles: unknown profile "fast" (known: paper, smoke)`}},
		{"profile names unknown stage", repl("      train: {params", "      trian: {params"), "smoke", []string{`profiles.smoke.stages.trian: unknown stage "trian"`}},
		{"profile unknown field", repl("    seeds: {eval: [1]}", "    seed: {eval: [1]}"), "", []string{"profiles.smoke.seed: unknown field (known: seeds, stages, planned)"}},
		// A dag file broken under one profile is broken under every one.
		{"bad value in other profile", repl("params: {alpha: 0.01}", "params: {alpha: '0.01x'}"), "paper", []string{`stage "train": params.alpha: must be a number, got a string (set by profiles.smoke.stages.train.params.alpha) (under profile smoke)`}},
		{"bad base value the profile overrides", repl("params: {alpha: 0.03}", "params: {alpha: -0.03}"), "smoke", []string{`stage "train": params.alpha: must be > 0, got -0.03 (in the base parameters, before any profile)`}},
		{"non-finite value", repl("params: {alpha: 0.03}", "params: {alpha: .inf}"), "", []string{`stage "train": params.alpha: must be a finite number, got +Inf`}},
		{"NaN value", repl("params: {alpha: 0.03}", "params: {alpha: .nan}"), "", []string{`stage "train": params.alpha: must be a finite number, got NaN`}},
		{"input matches nothing", repl("    matrix: {d: [10, 100], seed: $eval}\n    params", "    matrix: {d: [10, 1000], seed: $eval}\n    params"), "", []string{`stage "train": inputs.data: no task of stage "data" matches train/d=1000/seed=1`}},
		{"input ambiguous", repl("    inputs: {data: data}\n    matrix: {d: [10, 100], seed: $eval}", "    inputs: {data: data}\n    matrix: {d: [10, 100]}"), "", []string{`stage "train": inputs.data: 2 tasks of stage "data" match train/d=10 but the slot takes one`}},
		{"where on unknown axis", repl("inputs: {data: data}", "inputs: {data: {stage: data, where: {h: 1}}}"), "", []string{`stage "train": inputs.data.where.h: stage "data" has no axis "h"`}},
		{"override on unknown axis", repl("    params: {alpha: 0.03}\n", "    params: {alpha: 0.03}\n    overrides: [{when: {h: 1}, params: {alpha: 0.1}}]\n"), "", []string{`stage "train": overrides[0].when.h: stage has no axis "h"`}},
		{"param is also an axis", repl("params: {alpha: 0.03}", "params: {alpha: 0.03, d: 5}"), "", []string{`stage "train": params.d: also a matrix axis`}},
		{"exclude on unknown axis", repl("    params: {alpha: 0.03}\n", "    params: {alpha: 0.03}\n    exclude: [{h: 1}]\n"), "", []string{`stage "train": exclude[0].h: stage has no axis "h"`}},
		{"exclude everything", repl("    params: {alpha: 0.03}\n", "    params: {alpha: 0.03}\n    exclude: [{d: 10}, {d: 100}]\n"), "", []string{`stage "train": exclude: excludes every point of the matrix`}},
		{"list for a one-task slot", repl("inputs: {data: data}", "inputs: {data: [data, {stage: data, where: {seed: [1]}}]}"), "", []string{`stage "train": inputs.data: 2 stages feed the slot but it takes one task`}},
		{"empty input list", repl("inputs: {curves: train}", "inputs: {curves: []}"), "", []string{`stage "figure": inputs.curves: must name at least one stage`}},
		{"bad entry in an input list", repl("inputs: {curves: train}", "inputs: {curves: [train, 3]}"), "", []string{`stage "figure": inputs.curves[1]: must be a stage name or {stage, where, optional}`}},
		{"unknown table", tabled("{table: publishd, match: [d, seed], set: [alpha]}"), "", []string{`stage "train": table_overrides[0].table: no table "publishd" (known: [published])`}},
		{"unknown table column", tabled("{table: published, match: [d, sed], set: [alpha]}"), "", []string{`stage "train": table_overrides[0].match[1]: table "published" has no column sed (columns: [d seed alpha top])`}},
		{"matched and set", tabled("{table: published, match: [d, seed], set: [alpha, d]}"), "", []string{`stage "train": table_overrides[0].set: column "d" is matched, not set`}},
		{"unknown table_overrides field", tabled("{table: published, match: [d, seed], set: [alpha], when: x}"), "", []string{`stage "train": table_overrides[0].when: unknown field (known: table, match, set, into)`}},
		{"table column not an axis", tabled("{table: published, match: [d, seed, top], set: [alpha]}"), "", []string{`stage "train": table_overrides[0] (tables.published.rows[0]).when.top: stage has no axis "top"`}},
		{"short table row", strings.Replace(tabled("{table: published, match: [d, seed], set: [alpha]}"), "[100, 2, 0.07, 3]", "[100, 2, 0.07]", 1), "", []string{`tables.published.rows[1]: must be a list of 4 values ([d seed alpha top]), got [100 2 0.07]`}},
		{"non-scalar table cell", strings.Replace(tabled("{table: published, match: [d, seed], set: [alpha]}"), "[100, 2, 0.07, 3]", "[100, 2, [0.07], 3]", 1), "", []string{`tables.published.rows[1][2]: must be a number, a string or a boolean`}},
		{"duplicate table column", strings.Replace(tabled("{table: published, match: [d, seed], set: [alpha]}"), "[d, seed, alpha, top]", "[d, seed, alpha, d]", 1), "", []string{`tables.published.columns[3]: duplicate column "d"`}},
		{"unknown table field", strings.Replace(tabled("{table: published, match: [d, seed], set: [alpha]}"), "    columns:", "    colour: red\n    columns:", 1), "", []string{`tables.published.colour: unknown field (known: columns, rows)`}},
		{"a bad value from a profile's table", strings.Replace(strings.Replace(good, "stages:\n", "tables:\n  published:\n    columns: [d, seed, alpha]\n    rows:\n      - [10, 1, -0.05]\nstages:\n", 1),
			"train: {params: {alpha: 0.01}, matrix: {d: [10]}}", "train: {matrix: {d: [10]}, table_overrides: [{table: published, match: [d, seed], set: [alpha]}]}", 1), "smoke",
			[]string{`stage "train": params.alpha: must be > 0, got -0.05 (set by profiles.smoke.stages.train.table_overrides[0] (tables.published.rows[0]).params.alpha)`}},
		{"a bad value from a table", strings.Replace(tabled("{table: published, match: [d, seed], set: [alpha]}"), "0.07", "-0.07", 1), "", []string{`stage "train": params.alpha: must be > 0, got -0.07`}},
		{"yaml syntax", "version: 1\nstages: [\n", "", []string{"dag.yaml: cannot read"}},
		{"duplicate yaml key", repl("    kind: show\n", "    kind: show\n    kind: gen\n"), "", []string{"dag.yaml: cannot read", "already defined"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := write(t, c.text)
			_, err := dag.Load(path, c.profile, kinds)
			if c.want == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if !errors.Is(err, dag.ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, path) {
				t.Errorf("error does not name the file %s:\n%s", path, msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%s", w, msg)
				}
			}
		})
	}
}

func TestExcludeDropsMatrixPoints(t *testing.T) {
	text := strings.Replace(good, "    params: {alpha: 0.03}\n", "    params: {alpha: 0.03}\n    exclude: [{d: 100, seed: 2}]\n", 1)
	plan, err := dag.Load(write(t, text), "", kinds)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Task("train/d=100/seed=2") != nil || plan.Task("train/d=100/seed=1") == nil {
		t.Fatal("exclude dropped the wrong points")
	}
	if n := len(plan.Task("figure").Inputs["curves"]); n != 3 {
		t.Fatalf("figure has %d inputs, want 3", n)
	}
}

func TestMissingFile(t *testing.T) {
	_, err := dag.Load(filepath.Join(t.TempDir(), "nope.yaml"), "", kinds)
	if err == nil || !strings.Contains(err.Error(), "nope.yaml: cannot read") || !errors.Is(err, dag.ErrInvalid) {
		t.Fatalf("err = %v", err)
	}
}

func TestAllProblemsAtOnce(t *testing.T) {
	text := strings.NewReplacer(
		"alpha: 0.03}", "alpha: -1, top: 20}",
		"kind: show", "kind: draw",
		"seed: $eval}\n  - name: train", "seed: $nope}\n  - name: train",
	).Replace(good)
	_, err := dag.Load(write(t, text), "", kinds)
	var ps dag.Problems
	if !errors.As(err, &ps) {
		t.Fatalf("err = %v", err)
	}
	// Structural problems are reported before parameters are decoded, so
	// a second pass finds these; the first must report both structural ones.
	msg := err.Error()
	for _, w := range []string{`unknown kind "draw"`} {
		if !strings.Contains(msg, w) {
			t.Errorf("missing %q in\n%s", w, msg)
		}
	}
	text2 := strings.NewReplacer("alpha: 0.03}", "alpha: -1, top: 20, colour: 1}").Replace(good)
	_, err = dag.Load(write(t, text2), "", kinds)
	msg = err.Error()
	for _, w := range []string{"params.alpha: must be > 0, got -1", "params.top: 20 is out of range", "params.colour: unknown parameter"} {
		if !strings.Contains(msg, w) {
			t.Errorf("missing %q in\n%s", w, msg)
		}
	}
	if n := strings.Count(msg, "params.alpha"); n != 1 {
		t.Errorf("the same problem is reported %d times (once per task?), want once:\n%s", n, msg)
	}
}

func FuzzLoad(f *testing.F) {
	f.Add(good)
	f.Add("version: 1\nstages: []\n")
	f.Add("version: 1\nstages:\n  - {name: a, kind: gen, matrix: {seed: [1]}}\n  - {name: b, kind: fit, inputs: {data: a}, matrix: {seed: [1]}, params: {alpha: 1}}\n")
	f.Add("{")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		path := filepath.Join(dir, "dag.yaml")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, profile := range []string{"", "smoke"} {
			plan, err := dag.Load(path, profile, kinds)
			if err == nil && plan == nil {
				t.Fatal("nil plan without error")
			}
			if err != nil && !errors.Is(err, dag.ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
		}
	})
}

// A mistake that every task of a large matrix repeats is reported in a few
// lines, and the tasks do not keep the inputs they wrongly matched (issue
// 27: an invalid fan-in took 195 s and 4.6 GB before it was rejected).
func TestManyProblemsOfOneFieldAreSummarised(t *testing.T) {
	var ks []string
	for k := 1; k <= 30; k++ {
		ks = append(ks, fmt.Sprintf("k%d", k))
	}
	text := strings.Replace(good, "    inputs: {data: data}\n    matrix: {d: [10, 100], seed: $eval}",
		"    inputs: {data: data}\n    matrix: {d: [10, 100], k: ["+strings.Join(ks, ", ")+"]}", 1)
	_, err := dag.Load(write(t, text), "paper", kinds)
	var ps dag.Problems
	if !errors.As(err, &ps) {
		t.Fatalf("err = %v", err)
	}
	listed := 0
	for _, p := range ps {
		if strings.Contains(p.Error(), "inputs.data: 2 tasks of stage") {
			listed++
		}
	}
	if listed != 10 || !strings.Contains(err.Error(), `stage "train": inputs.data: and 50 more problems like those above`) {
		t.Fatalf("%d listed:\n%v", listed, err)
	}
}

// A stage with a profiles list is planned in those profiles only (the
// crossover experiment's stages in its own profile and quick's); a stage
// kept may not take an input from one dropped, and a profile it names must
// exist.
func TestStageProfiles(t *testing.T) {
	const text = `version: 1
stages:
  - name: data
    kind: gen
  - name: extra
    kind: gen
    profiles: [small]
  - name: fit
    kind: fit
    params: {alpha: 0.1}
    inputs: {data: data}
profiles:
  small: {}
`
	path := write(t, text)
	for profile, want := range map[string]int{"paper": 2, "": 2, "small": 3} {
		plan, err := dag.Load(path, profile, kinds)
		if err != nil {
			t.Fatalf("profile %q: %v", profile, err)
		}
		if len(plan.Tasks) != want {
			t.Errorf("profile %q: %d tasks, want %d", profile, len(plan.Tasks), want)
		}
	}
	bad := strings.Replace(text, "inputs: {data: data}", "inputs: {data: extra}", 1)
	if _, err := dag.Load(write(t, bad), "paper", kinds); err == nil || !strings.Contains(err.Error(), `inputs.data: stage "extra" is not planned in profile paper (its profiles: small)`) {
		t.Errorf("an input from a stage of another profile: %v", err)
	}
	bad = strings.Replace(text, "profiles: [small]", "profiles: [smal]", 1)
	if _, err := dag.Load(write(t, bad), "small", kinds); err == nil || !strings.Contains(err.Error(), `profiles[0]: unknown profile "smal"`) {
		t.Errorf("an unknown profile name: %v", err)
	}
}

// A profile's planned list plans only the stages it names, and a profile
// may replace a stage's input slots: a standalone experiment's profile
// with its own report.
func TestProfilePlannedAndInputs(t *testing.T) {
	const text = `version: 1
stages:
  - name: data
    kind: gen
  - name: other
    kind: gen
    profiles: [alone]
  - name: fit
    kind: fit
    params: {alpha: 0.1}
    inputs: {data: data}
profiles:
  alone:
    planned: [other, fit]
    stages:
      fit: {inputs: {data: other}}
`
	plan, err := dag.Load(write(t, text), "alone", kinds)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, tk := range plan.Tasks {
		paths = append(paths, tk.Path)
	}
	if strings.Join(paths, " ") != "other fit" || plan.Task("fit").Inputs["data"][0].Path != "other" {
		t.Errorf("planned %v, fit's data from %v", paths, plan.Task("fit").Inputs["data"])
	}
	if plan, err := dag.Load(write(t, text), "paper", kinds); err != nil || len(plan.Tasks) != 2 {
		t.Errorf("paper: %v, %v", plan, err)
	}
	bad := strings.Replace(text, "planned: [other, fit]", "planned: [other, fitt]", 1)
	if _, err := dag.Load(write(t, bad), "alone", kinds); err == nil || !strings.Contains(err.Error(), `profiles.alone.planned[1]: unknown stage "fitt"`) {
		t.Errorf("an unknown planned stage: %v", err)
	}
	// An optional input from a stage left out is dropped: the stage's own
	// parameters serve.
	opt := strings.Replace(text, "    inputs: {data: data}", "    inputs: {data: data, hyper: {stage: other, optional: true}}", 1)
	if plan, err := dag.Load(write(t, opt), "paper", kinds); err != nil || len(plan.Task("fit").Inputs["hyper"]) != 0 {
		t.Errorf("an optional input from a stage not planned: %v", err)
	}
	bad = strings.Replace(text, "      fit: {inputs: {data: other}}\n", "", 1)
	if _, err := dag.Load(write(t, bad), "alone", kinds); err == nil || !strings.Contains(err.Error(), `stage "data" is not planned in profile alone (the profile's planned list leaves it out)`) {
		t.Errorf("an input from a stage the planned list leaves out: %v", err)
	}
}

// checkedSet is a Checked in memory.
type checkedSet map[string]bool

func (c checkedSet) Has(d string) bool { return c[d] }
func (c checkedSet) Add(d string)      { c[d] = true }

// A file checked clean under every profile is remembered by its bytes;
// a load of the same bytes then checks the chosen profile only (shown
// with a file whose other profile is broken: remembered as checked, it
// loads; not remembered, it fails), and a file that fails is not
// remembered.
func TestCheckedFilesAreNotCheckedAgain(t *testing.T) {
	checked := checkedSet{}
	if _, err := dag.LoadWith(write(t, good), "paper", kinds, dag.Options{Checked: checked}); err != nil || len(checked) != 1 {
		t.Fatalf("a good file: %v, %d remembered", err, len(checked))
	}
	broken := strings.Replace(good, "params: {alpha: 0.01}", "params: {alpha: '0.01x'}", 1)
	path := write(t, broken)
	if _, err := dag.LoadWith(path, "paper", kinds, dag.Options{Checked: checked}); err == nil || !strings.Contains(err.Error(), "(under profile smoke)") || len(checked) != 1 {
		t.Fatalf("a file broken under another profile: %v, %d remembered", err, len(checked))
	}
	sum := sha256.Sum256([]byte(broken))
	checked[hex.EncodeToString(sum[:])] = true
	if _, err := dag.LoadWith(path, "paper", kinds, dag.Options{Checked: checked}); err != nil {
		t.Errorf("the same bytes remembered as checked: %v", err)
	}
	if _, err := dag.LoadWith(path, "smoke", kinds, dag.Options{Checked: checked}); err == nil {
		t.Error("the chosen profile is always checked: the broken profile loaded")
	}
}
