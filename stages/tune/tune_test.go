package tune_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"zorepro/algos"
	"zorepro/pipeline"
	"zorepro/pipeline/codeid"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/events"
	"zorepro/pipeline/store"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
	"zorepro/stages/generate"
	"zorepro/stages/tune"
)

// table is a fake problem: its "instance" is the seed, and a method's
// final score is a table lookup of (a, b), so selection is known exactly.
type table struct{}

func (table) PlanGenerate(p *task.Params) func(src stream.Source) ([]byte, error) {
	return func(src stream.Source) ([]byte, error) { return []byte(fmt.Sprint(src.Root())), nil }
}
func (table) Load(data []byte) (string, error) { return string(data), nil }
func (table) Metrics() []string                { return []string{"loss", "other"} }
func (table) Evaluate(inst string, snap []float64, h trajectory.Header, rng *rand.Rand) ([]float64, error) {
	return []float64{snap[0], -snap[0]}, nil
}

// scores[a][b] is the score of grid point (a, b) on seed 1; seed 2 adds 1
// to every score, so means keep the order.
var scores = map[float64]map[int64]float64{
	0.1: {1: 5, 2: 3, 3: 9},
	0.2: {1: 3, 2: 4, 3: 9},
	0.3: {1: math.NaN(), 2: 7, 3: 9},
}

type lookup struct{}

type cfg struct {
	A float64 `json:"a"`
	B int64   `json:"b"`
}

func (c cfg) Validate() error {
	if c.B > 2 {
		return fmt.Errorf("b = %d > 2", c.B)
	}
	return nil
}
func (c cfg) Header() trajectory.Header { return trajectory.Header{} }
func (lookup) Hyper() []string          { return []string{"a", "b"} }
func (lookup) Decode(p *task.Params) cfg {
	return cfg{A: p.Float("a", task.Required()), B: p.Int("b", task.Required())}
}
func (lookup) New(c cfg, inst string, src stream.Source) (algos.Method, error) {
	s := scores[c.A][c.B]
	if inst == "2" {
		s++
	}
	return &once{v: []float64{s}}, nil
}

type once struct{ v []float64 }

func (o *once) Step(it int64) (algos.Stat, error) { return algos.Stat{Samples: 1, Done: true}, nil }
func (o *once) Params() []float64                 { return o.v }
func (o *once) Snapshot() []float64               { return o.v }
func (o *once) MarshalState() ([]byte, error)     { return nil, nil }
func (o *once) UnmarshalState([]byte) error       { return nil }

type code struct{}

func (code) Closure(roots ...string) (codeid.Identity, error) {
	return codeid.Identity{ID: "xxh64-0000000000000000"}, nil
}
func (code) BuildLines() []string { return nil }

// genStage generates the fake problem's two tables; lookupTune is the
// body of a tune stage over them (after its name and inputs).
const genStage = `version: 1
stages:
  - name: gen
    kind: generate
    params: {env: table}
    matrix: {seed: [1, 2]}
`
const lookupTune = `    kind: tune
    params:
      env: table
      method: lookup
      budget: 1
      seeds: [1, 2]
`

const dagText = genStage + `  - name: tune
    inputs: {data: gen}
` + lookupTune + `      grid: {a: [0.1, 0.2, 0.3], b: [1, 2, 3]}
      reference: {a: 0.2, b: 2}
      SELECT
`

// testKinds are the generate and tune kinds over the fake problem.
func testKinds() map[string]task.Kind {
	return map[string]task.Kind{
		"generate": &generate.Kind{Generators: map[string]algos.Generator{"table": table{}}},
		"tune":     &tune.Kind{Trainers: algos.Trainers{"table": {"lookup": algos.Bind[string, cfg](table{}, lookup{})}}},
	}
}

// run executes the two-stage dag and returns tune's outputs by name.
func run(t *testing.T, sel string) map[string]string {
	t.Helper()
	_, st, log := runDAG(t, t.TempDir(), strings.Replace(dagText, "SELECT", sel, 1))
	defer log.Close()
	return outputs(t, st, log, "tune")
}

// outputs returns the files of the recorded output of the task named name,
// by file name; it fails t when that task has no output.
func outputs(t *testing.T, st *store.Store, log *events.Log, name string) map[string]string {
	t.Helper()
	states, err := log.LastStates()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range states {
		if s.Task != name {
			continue
		}
		id, _ := store.ParseID(s.Output)
		manifest, err := st.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(manifest)), "\n")[1:] {
			f := strings.Fields(line)
			id, _ := store.ParseID(f[1])
			b, err := st.Get(id)
			if err != nil {
				t.Fatal(err)
			}
			out[f[0]] = string(b)
		}
		return out
	}
	t.Fatalf("%s did not run", name)
	return nil
}

// runDAG runs a dag in dir's store and returns the result, the store and
// the open log.
func runDAG(t *testing.T, dir, text string) (*pipeline.Result, *store.Store, *events.Log) {
	t.Helper()
	return runDAGWith(t, dir, text, testKinds())
}

// runDAGWith is runDAG over the given kinds.
func runDAGWith(t *testing.T, dir, text string, kinds map[string]task.Kind) (*pipeline.Result, *store.Store, *events.Log) {
	t.Helper()
	path := filepath.Join(dir, "dag.yaml")
	os.WriteFile(path, []byte(text), 0o644)
	plan, err := dag.Load(path, "", kinds)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := store.Open(filepath.Join(dir, "store"))
	log, err := events.Open(filepath.Join(dir, "store", "events.db"), events.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e := &pipeline.Engine{Plan: plan, Store: st, Events: log, Code: code{}, Opt: pipeline.Options{Jobs: 2}}
	res, err := e.Run(context.Background())
	if err != nil {
		log.Close()
		t.Fatal(err)
	}
	return res, st, log
}

func TestSelectMinTiesToFirstGridPoint(t *testing.T) {
	out := run(t, "select: min")
	var chosen struct {
		Params         map[string]any `json:"params"`
		Point          int            `json:"point"`
		Score          float64        `json:"score"`
		ReferencePoint int            `json:"reference_point"`
	}
	if err := json.Unmarshal([]byte(out["chosen.json"]), &chosen); err != nil {
		t.Fatal(err)
	}
	// Feasible points in loop order (a outer, b inner, b <= 2):
	// 0:(0.1,1)=5.5 1:(0.1,2)=3.5 2:(0.2,1)=3.5 3:(0.2,2)=4.5 4:(0.3,1)=NaN 5:(0.3,2)=7.5
	// 1 and 2 tie at 3.5: the first in loop order wins; NaN never wins.
	if chosen.Point != 1 || chosen.Params["a"] != 0.1 || chosen.Params["b"] != 2.0 || chosen.Score != 3.5 {
		t.Fatalf("chosen = %+v", chosen)
	}
	if chosen.ReferencePoint != 3 {
		t.Errorf("reference point = %d, want 3", chosen.ReferencePoint)
	}
	want := `point,a,b,mean_loss,loss_seed_1,loss_seed_2,chosen,reference
0,0.1,1,5.5,5,6,,
1,0.1,2,3.5,3,4,yes,
2,0.2,1,3.5,3,4,,
3,0.2,2,4.5,4,5,,yes
4,0.3,1,NaN,NaN,NaN,,
5,0.3,2,7.5,7,8,,
`
	if out["table.csv"] != want {
		t.Errorf("table.csv:\n%s\nwant\n%s", out["table.csv"], want)
	}
	// The points whose configuration does not validate (b = 3) are listed
	// with the reason they were left out.
	wantSkipped := `a,b,reason
0.1,3,b = 3 > 2
0.2,3,b = 3 > 2
0.3,3,b = 3 > 2
`
	if out["skipped.csv"] != wantSkipped {
		t.Errorf("skipped.csv:\n%s\nwant\n%s", out["skipped.csv"], wantSkipped)
	}
}

// A grid whose every point is infeasible is an error that says why.
func TestGridWithoutFeasiblePoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dag.yaml")
	text := strings.Replace(strings.Replace(dagText, "SELECT", "select: min", 1), "b: [1, 2, 3]", "b: [3, 4]", 1)
	text = strings.Replace(text, "reference: {a: 0.2, b: 2}", "", 1)
	os.WriteFile(path, []byte(text), 0o644)
	_, err := dag.Load(path, "", testKinds())
	if err == nil || !strings.Contains(err.Error(), `params.grid: has no feasible point (6 skipped: b = 3 > 2)`) {
		t.Fatalf("err = %v", err)
	}
}

func TestSelectMaxOnAnotherMetric(t *testing.T) {
	out := run(t, "select: max\n      score: other")
	if !strings.Contains(out["chosen.json"], `"point": 1`) {
		t.Fatalf("max of −loss should pick the min-loss point 1:\n%s", out["chosen.json"])
	}
}

func TestScoreBySamplesTiesToFirstPoint(t *testing.T) {
	// Every trial stops after one iteration of one sample: all scores tie
	// at 1 and the first feasible grid point wins.
	out := run(t, "select: min\n      score: samples")
	if !strings.Contains(out["chosen.json"], `"point": 0`) || !strings.Contains(out["table.csv"], "mean_samples") {
		t.Fatalf("chosen.json:\n%s\ntable.csv:\n%s", out["chosen.json"], out["table.csv"])
	}
}

// Every trial (grid point × tuning seed) is a task of its own, named by its
// values, upstream of the tune task; growing the grid reruns only the new
// trials and the selection.
func TestGrowingTheGridRerunsOnlyNewTrials(t *testing.T) {
	dir := t.TempDir()
	small := strings.Replace(strings.Replace(dagText, "SELECT", "select: min", 1), "a: [0.1, 0.2, 0.3]", "a: [0.1, 0.2]", 1)
	res, _, log := runDAG(t, dir, small)
	log.Close()
	trials := []string{
		"tune/a=0.1/b=1/seed=1", "tune/a=0.1/b=1/seed=2", "tune/a=0.1/b=2/seed=1", "tune/a=0.1/b=2/seed=2",
		"tune/a=0.2/b=1/seed=1", "tune/a=0.2/b=1/seed=2", "tune/a=0.2/b=2/seed=1", "tune/a=0.2/b=2/seed=2",
	}
	if want := append([]string{"gen/seed=1", "gen/seed=2"}, append(trials, "tune")...); fmt.Sprint(res.Executed) != fmt.Sprint(want) {
		t.Fatalf("first run executed %v\nwant %v", res.Executed, want)
	}
	res, _, log = runDAG(t, dir, strings.Replace(dagText, "SELECT", "select: min", 1))
	log.Close()
	newTrials := []string{"tune/a=0.3/b=1/seed=1", "tune/a=0.3/b=1/seed=2", "tune/a=0.3/b=2/seed=1", "tune/a=0.3/b=2/seed=2"}
	if want := append(newTrials, "tune"); fmt.Sprint(res.Executed) != fmt.Sprint(want) {
		t.Errorf("after adding a = 0.3, executed %v\nwant %v", res.Executed, want)
	}
	if want := append([]string{"gen/seed=1", "gen/seed=2"}, trials...); fmt.Sprint(res.Cached) != fmt.Sprint(want) {
		t.Errorf("after adding a = 0.3, cached %v\nwant %v", res.Cached, want)
	}
}

const carryDAG = genStage + `  - name: first
    inputs: {data: gen}
` + lookupTune + `      grid: {a: [0.1, 0.2, 0.3], b: [1, 2]}
  - name: second
    inputs: {data: gen, carry: first}
` + lookupTune + `      grid: {a: [0.1, 0.2, 0.3]}
      b: 1
      carry: [b]
`

// A tune stage can carry hyperparameters from another tune task's choice
// and tune only the rest (the horizon sweep carries N and ν from H = 15 and
// tunes the step size): its trials run with the carried values, and its
// choice records them for the train stage. first chooses (a, b) = (0.1, 2);
// second's trials then run at b = 2 (means 3.5, 4.5, 7.5: a = 0.1), where
// its own b = 1 would have chosen a = 0.2 (means 5.5, 3.5, NaN).
func TestCarriedHyperparameters(t *testing.T) {
	dir := t.TempDir()
	_, st, log := runDAG(t, dir, carryDAG)
	defer log.Close()
	var chosen struct {
		Params      map[string]float64 `json:"params"`
		Carried     map[string]float64 `json:"carried"`
		CarriedFrom string             `json:"carried_from"`
		Score       float64            `json:"score"`
	}
	if err := json.Unmarshal([]byte(outputs(t, st, log, "second")["chosen.json"]), &chosen); err != nil {
		t.Fatal(err)
	}
	if chosen.Params["a"] != 0.1 || chosen.Params["b"] != 2 || chosen.Score != 3.5 {
		t.Errorf("second chose %+v, want a = 0.1, b = 2 (carried), score 3.5", chosen)
	}
	if chosen.Carried["b"] != 2 || chosen.CarriedFrom != "first" {
		t.Errorf("carried %v from %q, want b = 2 from first", chosen.Carried, chosen.CarriedFrom)
	}
}

// A carried hyperparameter must be one the method has and not a grid axis.
func TestCarryValidation(t *testing.T) {
	for _, c := range []struct{ carry, want string }{
		{"[a]", `params.carry: "a" is also a grid axis`},
		{"[c]", `params.carry: "c" is not a hyperparameter of second (a, b)`},
	} {
		path := filepath.Join(t.TempDir(), "dag.yaml")
		os.WriteFile(path, []byte(strings.Replace(carryDAG, "carry: [b]", "carry: "+c.carry, 1)), 0o644)
		_, err := dag.Load(path, "", testKinds())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("carry %s: err = %v, want %q", c.carry, err, c.want)
		}
	}
}
