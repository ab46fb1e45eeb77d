package stages_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/events"
	"zorepro/pipeline/pipelinetest"
	"zorepro/pipeline/store"
	"zorepro/stages"
)

// cohortDAG tunes ARS and REINFORCE on linear regression at d = 200: the
// trials of one method and seed (and, for ARS, one number of directions)
// draw the same batches, so they run as cohorts.
const cohortDAG = `version: 1
stages:
  - name: generate/linreg
    kind: generate
    params: {env: linreg}
    matrix: {d: [200], seed: [283, 457]}
  - name: tune/linreg
    kind: tune
    inputs: {data: generate/linreg}
    matrix: {d: [200], method: [ars, reinforce]}
    params: {env: linreg, seeds: [283, 457], budget: 6000, strict_budget: true, score: test_loss, select: min}
    overrides:
      - when: {method: ars}
        params: {grid: {alpha: [0.01, 0.03], directions: [10, 20], nu: [0.02, 0.03], top: [10]}}
      - when: {method: reinforce}
        params: {grid: {lr: [0.03, 0.01, 0.003]}, batch: 128, beta: 0.5, optimizer: esadam}
`

// runStagesDAG runs a dag of the stages' kinds into a fresh store and
// returns every task's output ID and the done events' data of the tuning
// trials. In a benchmark, generate/linreg runs first, untimed.
func runStagesDAG(t testing.TB, text string, noCohorts bool) (outs map[string]string, done map[string]pipeline.DoneData) {
	return runDAG(t, text, dagRun{noCohorts: noCohorts})
}

// dagRun sets how runDAG runs a dag.
type dagRun struct {
	noCohorts bool
	jobs      int            // default 2
	elapsed   *time.Duration // if not nil, incremented by the run's wall time (generation excluded)
}

// runDAG runs a dag of generate/linreg and the stages after it into a new
// store; a benchmark's timer (and o.elapsed) runs only while the stages
// after generation do.
func runDAG(t testing.TB, text string, o dagRun) (outs map[string]string, done map[string]pipeline.DoneData) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "dag.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := dag.Load(path, "", stages.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	return runPlan(t, plan, dir, o)
}

// openStore opens a new store in dir/store, its event log, and fake code
// identities for the engines that run there.
func openStore(t testing.TB, dir string) (*store.Store, *events.Log, *pipelinetest.FakeCode) {
	t.Helper()
	st, err := store.Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	log, err := events.Open(filepath.Join(dir, "store", "events.db"), events.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return st, log, pipelinetest.NewFakeCode()
}

// runPlan runs plan into a new store in dir, as runDAG says.
func runPlan(t testing.TB, plan *dag.Plan, dir string, o dagRun) (outs map[string]string, done map[string]pipeline.DoneData) {
	t.Helper()
	jobs := o.jobs
	if jobs == 0 {
		jobs = 2
	}
	st, log, code := openStore(t, dir)
	b, isBench := t.(*testing.B)
	if isBench || o.elapsed != nil { // time the rest alone: generate first
		if isBench {
			b.StopTimer()
		}
		var gens []string
		for _, tk := range plan.Tasks {
			if tk.Stage.Kind == "generate" && !slices.Contains(gens, tk.Stage.Name) {
				gens = append(gens, tk.Stage.Name)
			}
		}
		gen, err := plan.Only(gens)
		if err != nil {
			t.Fatal(err)
		}
		e := &pipeline.Engine{Plan: gen, Store: st, Events: log, Code: code, Platform: pipeline.HostPlatform(), Opt: pipeline.Options{Jobs: jobs}}
		if _, err := e.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if isBench {
			b.StartTimer()
		}
	}
	e := &pipeline.Engine{Plan: plan, Store: st, Events: log, Code: code, Platform: pipeline.HostPlatform(),
		Opt: pipeline.Options{Jobs: jobs, NoCohorts: o.noCohorts, CheckpointInterval: 10 * time.Second}} // the CLI default
	t0 := time.Now()
	if _, err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if o.elapsed != nil {
		*o.elapsed += time.Since(t0)
	}
	if isBench {
		b.StopTimer()
		defer b.StartTimer()
	}
	done = map[string]pipeline.DoneData{}
	for _, tk := range plan.Tasks {
		if !strings.Contains(tk.Path, "/seed=") || !strings.HasPrefix(tk.Path, "tune/") {
			continue
		}
		evs, err := log.Events(tk.Path)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Type == events.TypeState && ev.State == events.StateDone {
				var d pipeline.DoneData
				if len(ev.Data) > 0 {
					json.Unmarshal(ev.Data, &d)
				}
				done[tk.Path] = d
			}
		}
	}
	log.Close()
	outs = map[string]string{}
	for task, s := range pipelinetest.LastStates(t, filepath.Join(dir, "store")) {
		outs[task] = s.Output
	}
	lastStore = storeReader{st}
	return outs, done
}

// lastStore reads the store of runStagesDAG's last run.
var lastStore storeReader

type storeReader struct{ st *store.Store }

// read returns one file of a recorded output (its manifest's ID).
func (r storeReader) read(t testing.TB, output, file string) []byte {
	t.Helper()
	for _, e := range r.outputs(t, output) {
		if e.Name == file {
			return mustGet(t, r.st, e.ID)
		}
	}
	t.Fatalf("output %s has no %s", output, file)
	return nil
}

// names lists the files of a recorded output.
func (r storeReader) names(t testing.TB, output string) []string {
	t.Helper()
	var out []string
	for _, e := range r.outputs(t, output) {
		out = append(out, e.Name)
	}
	return out
}

// outputs decodes a recorded output's manifest.
func (r storeReader) outputs(t testing.TB, output string) []pipeline.OutputEntry {
	t.Helper()
	id, err := store.ParseID(output)
	if err != nil {
		t.Fatal(err)
	}
	es, err := pipeline.DecodeOutputs(mustGet(t, r.st, id))
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func mustGet(t testing.TB, st *store.Store, id store.ID) []byte {
	t.Helper()
	b, err := st.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The tuning trials of a cohort, which take their batches from one
// another, score exactly as each trial run alone (as on a cluster), and
// so choose the same point.
func TestTuneCohortsGiveTheBitsOfTrialsAlone(t *testing.T) {
	alone, _ := runStagesDAG(t, cohortDAG, true)
	together, done := runStagesDAG(t, cohortDAG, false)
	if len(together) != len(alone) || len(alone) != 2+2+8*2+3*2 {
		t.Fatalf("%d and %d tasks recorded", len(together), len(alone))
	}
	for task, id := range alone {
		if together[task] != id {
			t.Errorf("%s: output %s in a cohort, %s alone", task, together[task], id)
		}
	}
	for task, d := range done { // every trial ran in a cohort
		if d.BusyNanos <= 0 {
			t.Errorf("%s ran alone (done data %+v)", task, d)
		}
	}
}

// BenchmarkTuneLinregCohorts times a tuning grid of the paper's shape at
// d = 1000 (REINFORCE's 9 step sizes, ARS's 5 step sizes × 5 ν at one
// number of directions, on one seed, 3·10^4 samples of the paper's 10^5; generation untimed) with
// each trial alone and with the trials in cohorts, in one run:
//
//	go test -run '^$' -bench TuneLinregCohorts -benchtime 1x ./stages/
func BenchmarkTuneLinregCohorts(b *testing.B) {
	text := strings.NewReplacer("d: [200]", "d: [1000]", "seed: [283, 457]", "seed: [283]", "seeds: [283, 457]", "seeds: [283]",
		"budget: 6000", "budget: 30000",
		"grid: {alpha: [0.01, 0.03], directions: [10, 20], nu: [0.02, 0.03], top: [10]}",
		"grid: {alpha: [0.001, 0.005, 0.01, 0.02, 0.03], directions: [200], nu: [0.001, 0.005, 0.01, 0.02, 0.03], top: [200]}",
		"grid: {lr: [0.03, 0.01, 0.003]}, batch: 128", "grid: {lr: [0.1, 0.08, 0.05, 0.03, 0.01, 0.007, 0.005, 0.003, 0.001]}, batch: 512").Replace(cohortDAG)
	for _, c := range []struct {
		name      string
		noCohorts bool
	}{{"alone", true}, {"cohorts", false}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				runStagesDAG(b, text, c.noCohorts)
			}
		})
	}
}

// BenchmarkTuneLinregProfiles times the tuning of linear regression as
// dag.yaml's profiles run it, each part with every trial alone and with
// the trials in cohorts, alternating in one run, on one worker (so the
// wall time is the task time; generation untimed), and checks that both
// give every trial the same output ID:
//
//   - quick: the quick profile's whole tune/linreg stage (60 trials at
//     d = 10, 100 and 1000; cohorts of 2 to 4);
//   - paper-d=1000-reinforce: a group of the paper profile's (REINFORCE at
//     d = 1000, 9 step sizes × 3 seeds at 10^5 samples; cohorts of 9);
//   - paper-d=100-ars-N=10: the paper's ARS trials at d = 100 with 10
//     directions (25 points × 2 top counts × 3 seeds; cohorts of 50);
//   - paper-d=1000-ars-N=10-seed=283: the same at d = 1000 on one seed
//     (one cohort of 50).
//
// Metrics: alone-s and cohorts-s per run, and speedup.
//
//	go test -run '^$' -bench TuneLinregProfiles -benchtime 1x ./stages/
func BenchmarkTuneLinregProfiles(b *testing.B) {
	for _, c := range []struct {
		name, profile, target string
		has                   []string // if set, only the target's tasks whose paths hold all of these
	}{
		{"quick", "quick", "tune/linreg", nil},
		{"paper-d=1000-reinforce", "paper", "tune/linreg/d=1000/method=reinforce", nil},
		{"paper-d=100-ars-N=10", "paper", "tune/linreg/d=100/method=ars", []string{"/directions=10/"}},
		{"paper-d=1000-ars-N=10-seed=283", "paper", "tune/linreg/d=1000/method=ars", []string{"/directions=10/", "/seed=283"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			full, err := dag.Load("../dag.yaml", c.profile, stages.Kinds())
			if err != nil {
				b.Fatal(err)
			}
			targets := []string{c.target}
			if c.has != nil {
				targets = nil
				for _, tk := range full.Tasks {
					if strings.HasPrefix(tk.Path, c.target+"/") && !slices.ContainsFunc(c.has, func(s string) bool { return !strings.Contains(tk.Path, s) }) {
						targets = append(targets, tk.Path)
					}
				}
			}
			plan, err := full.Only(targets)
			if err != nil {
				b.Fatal(err)
			}
			var alone, cohorts time.Duration
			for range b.N {
				a, _ := runPlan(b, plan, b.TempDir(), dagRun{jobs: 1, noCohorts: true, elapsed: &alone})
				together, _ := runPlan(b, plan, b.TempDir(), dagRun{jobs: 1, elapsed: &cohorts})
				n := 0
				for task, id := range a {
					if strings.HasPrefix(task, "tune/") {
						n++
						if together[task] != id {
							b.Fatalf("%s: output %s alone, %s in a cohort", task, id, together[task])
						}
					}
				}
				if n == 0 {
					b.Fatalf("%s: no tuning task ran", c.target)
				}
			}
			b.ReportMetric(alone.Seconds()/float64(b.N), "alone-s")
			b.ReportMetric(cohorts.Seconds()/float64(b.N), "cohorts-s")
			b.ReportMetric(alone.Seconds()/cohorts.Seconds(), "speedup")
		})
	}
}

// extendDAG tunes REINFORCE's step size on linear regression at d = 10 on
// a grid whose largest value wins, with one extension round.
const extendDAG = `version: 1
stages:
  - name: generate/linreg
    kind: generate
    params: {env: linreg}
    matrix: {d: [10], seed: [283, 457]}
  - name: tune/linreg
    kind: tune
    inputs: {data: generate/linreg}
    matrix: {d: [10], method: [reinforce]}
    params: {env: linreg, seeds: [283, 457], budget: 6000, strict_budget: true, score: test_loss, select: min,
      grid: {lr: LRS}, batch: 64, beta: 0.5, optimizer: esadam EXTEND}
`

// An extension round's trials, run inside the tune task, score exactly as
// the same points' trials run as parts of a grid that holds them.
func TestExtensionTrialsScoreAsGridTrials(t *testing.T) {
	extended := tuneTable(t, strings.NewReplacer("LRS", "[0.0005, 0.001, 0.002]", "EXTEND", ", extend: 1").Replace(extendDAG))
	grid := tuneTable(t, strings.NewReplacer("LRS", "[0.0005, 0.001, 0.002, 0.004]", "EXTEND", "").Replace(extendDAG))
	row := func(table, lr string) string {
		for _, l := range strings.Split(table, "\n") {
			if f := strings.Split(l, ","); len(f) > 5 && f[1] == lr {
				return strings.Join(f[1:5], ",") // lr, mean, the two seeds' scores
			}
		}
		return ""
	}
	if r := row(extended, "0.004"); r == "" || r != row(grid, "0.004") {
		t.Fatalf("lr = 0.004 extended %q, in the grid %q\nextended table:\n%s", r, row(grid, "0.004"), extended)
	}
}

// tuneTable runs a dag of one tune/linreg task and returns its table.csv.
func tuneTable(t *testing.T, text string) string {
	t.Helper()
	outs, _ := runStagesDAG(t, text, false)
	return string(lastStore.read(t, outs["tune/linreg/d=10/method=reinforce"], "table.csv"))
}
