package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"zorepro/pipeline/crashpoint"
	"zorepro/pipeline/events"
	"zorepro/pipeline/store"
)

// The crash harness: SIGKILL `pipeline run --profile smoke` at random
// points, including inside event commits and store publishes, resume until
// a run finishes, and check that the figures are the bytes of an
// uninterrupted run and that the event log replays cleanly.
var (
	crashKills = flag.Int("crash.kills", 20, "TestCrash: SIGKILLs to land over all trials (make test-reliability raises it)")
	crashSeed  = flag.Uint64("crash.seed", 0, "TestCrash: seed of the kill points; 0 takes one from the clock (the seed used is logged)")
)

// crashSites are the crashpoint.Hit sites of the pipeline (see package
// crashpoint); timedKill is a SIGKILL the test sends after a delay.
var crashSites = []string{
	"store.before-rename", "store.after-rename",
	"events.before-commit", "events.after-commit",
	"engine.checkpoint", "engine.published",
}

const timedKill = "timed"

// crashCheckpointInterval makes tasks checkpoint often, so that kills land
// between checkpoints and resumes start from them (the default 10s never
// checkpoints in a smoke run).
const crashCheckpointInterval = "20ms"

// killPoint is where one attempt dies: at the n-th hit of site, or, if site
// is timedKill, when the test sends SIGKILL after a delay.
type killPoint struct {
	site  string
	n     int
	after time.Duration
}

func (k killPoint) String() string {
	if k.site == timedKill {
		return "SIGKILL after " + k.after.Round(time.Millisecond).String()
	}
	return crashpoint.EnvCrash + "=" + k.site + ":" + strconv.Itoa(k.n)
}

// crashRef is the uninterrupted run the trials are held against.
type crashRef struct {
	figures map[string][]byte
	ids     map[string]string // figure name → ID
	tasks   []string          // every task of the plan
	counts  map[string]int    // crash-site hits
	wall    time.Duration
}

// crashEnv is the environment of the runs: the test's, without crashpoint
// variables of its own.
func crashEnv(extra ...string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, crashpoint.EnvCrash) })
	return append(env, extra...)
}

// crashArgs are the arguments of every run of a trial.
func crashArgs(root, st, figs string, jobs int) []string {
	return []string{"run", "--json", "--dag", filepath.Join(root, "dag.yaml"), "--profile", "smoke",
		"--store", st, "--figures", figs, "--jobs", strconv.Itoa(jobs), "--checkpoint-interval", crashCheckpointInterval}
}

// attempt runs the binary once in root. It returns whether the run died of
// SIGKILL (from its crash point or from the test) and fails the test if it
// exited in any other way than 0.
func attempt(t *testing.T, bin, root string, kill *killPoint, env []string, args []string) (killed bool, stdout []byte, wall time.Duration) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = root
	cmd.Env = env
	if kill != nil && kill.site != timedKill {
		cmd.Env = append(slices.Clip(env), crashpoint.EnvCrash+"="+kill.site+":"+strconv.Itoa(kill.n))
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if kill != nil && kill.site == timedKill {
		// Only the process started here is signalled; os.Process does
		// nothing once it has been waited for.
		timer := time.AfterFunc(kill.after, func() { cmd.Process.Signal(syscall.SIGKILL) })
		defer timer.Stop()
	}
	err := cmd.Wait()
	wall = time.Since(start)
	if err == nil {
		return false, out.Bytes(), wall
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL && kill != nil {
		return true, nil, wall
	}
	tail := errb.String()
	if len(tail) > 4000 {
		tail = "..." + tail[len(tail)-4000:]
	}
	t.Fatalf("pipeline %s (kill point %v): %v\n%s", strings.Join(args, " "), kill, err, tail)
	return false, nil, wall
}

// crashReference runs the smoke profile once, uninterrupted and counting
// crash-site hits, with the arguments the trials use.
func crashReference(t *testing.T, bin, root string) crashRef {
	dir := t.TempDir()
	countsFile := filepath.Join(dir, "counts.json")
	figs := filepath.Join(dir, "fig")
	_, out, wall := attempt(t, bin, root, nil, crashEnv(crashpoint.EnvCounts+"="+countsFile),
		crashArgs(root, filepath.Join(dir, "store"), figs, 2))
	var res runResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("decode %q: %v", out, err)
	}
	ref := crashRef{figures: readFigures(t, figs), ids: figureIDs(res), tasks: res.Executed, wall: wall}
	data, err := os.ReadFile(countsFile)
	if err == nil {
		err = json.Unmarshal(data, &ref.counts)
	}
	if err != nil {
		t.Fatalf("crash-site counts: %v", err)
	}
	if len(ref.tasks) == 0 || len(res.Cached) != 0 || len(ref.figures) == 0 {
		t.Fatalf("reference run: %d executed, %d cached, %d figures", len(ref.tasks), len(res.Cached), len(ref.figures))
	}
	return ref
}

func TestCrashAtRandomPointsThenResumeGivesIdenticalBytes(t *testing.T) {
	t.Parallel() // its kill points are events or delays within the run it measured; see tests.md
	bin := binary(t)
	root := repoRoot(t)
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	// The same seed repeats the kill points as far as timing allows (timed
	// kills, and checkpoints, which depend on the clock); every attempt's
	// kill point is logged so that one can also be rerun by hand.
	t.Logf("seed %d (rerun: go test -tags mujoco -run Crash ./cmd/pipeline/ -args -crash.seed=%d -crash.kills=%d)", seed, seed, *crashKills)
	rng := rand.New(rand.NewPCG(seed, 0x63726173682d7074)) // "crash-pt"

	start := time.Now()
	ref := crashReference(t, bin, root)
	t.Logf("reference: %d tasks, %d figure files in %s; crash-site hits %v", len(ref.tasks), len(ref.figures), ref.wall.Round(time.Millisecond), ref.counts)
	kinds := []string{timedKill}
	for _, s := range crashSites {
		if ref.counts[s] > 0 {
			kinds = append(kinds, s)
		} else {
			t.Errorf("crash site %s was never hit in the reference run", s)
		}
	}

	planned := map[string]int{} // kill points chosen, per kind
	fired := map[string]int{}   // kill points that killed a run
	total := 0
	for trial := 0; total < *crashKills; trial++ {
		if trial >= 2*(*crashKills)+5 {
			t.Fatalf("only %d of %d kill points fired in %d trials", total, *crashKills, trial)
		}
		// Two to four kill points; later ones may not fire if the resumed
		// run finishes first, so some trials are killed once.
		kills := min(2+rng.IntN(3), *crashKills-total)
		ok := t.Run(fmt.Sprintf("trial%02d", trial), func(t *testing.T) {
			dir := t.TempDir()
			st, figs := filepath.Join(dir, "store"), filepath.Join(dir, "fig")
			progress := 0.0 // estimated fraction of the run's work done before the kills so far
			for a := 0; ; a++ {
				if a > kills {
					t.Fatalf("attempt %d of a trial with %d kill points", a, kills)
				}
				jobs := 1 + rng.IntN(2)
				var kill *killPoint
				if a < kills {
					k := chooseKill(rng, kinds, planned, ref, 1-progress)
					planned[k.site]++
					kill = &k
				}
				args := crashArgs(root, st, figs, jobs)
				killed, _, wall := attempt(t, bin, root, kill, crashEnv(), args)
				if !killed {
					if kill != nil {
						t.Logf("attempt %d --jobs %d: %v did not fire; the run finished in %s", a, jobs, kill, wall.Round(time.Millisecond))
					} else {
						t.Logf("attempt %d --jobs %d: finished in %s", a, jobs, wall.Round(time.Millisecond))
					}
					break
				}
				t.Logf("attempt %d --jobs %d: killed by %v (ran %s)", a, jobs, kill, wall.Round(time.Millisecond))
				fired[kill.site]++
				total++
				if kill.site == timedKill {
					progress += float64(kill.after) / float64(ref.wall)
				} else {
					progress += float64(kill.n) / float64(ref.counts[kill.site])
				}
				progress = min(progress, 0.95)
			}
			checkCrashTrial(t, bin, root, st, figs, ref)
		})
		if !ok {
			t.Fatalf("trial %d failed (seed %d); its log above names its kill points", trial, seed)
		}
	}
	var lines []string
	for _, k := range kinds {
		lines = append(lines, fmt.Sprintf("%-22s %3d fired of %3d planned", k, fired[k], planned[k]))
	}
	t.Logf("%d kills in %s:\n%s", total, time.Since(start).Round(time.Second), strings.Join(lines, "\n"))
}

// chooseKill picks a kill point for an attempt with about remaining of the
// reference run's work left: the least planned kind so far (ties at
// random), then a hit number or delay uniform within that remaining part.
func chooseKill(rng *rand.Rand, kinds []string, planned map[string]int, ref crashRef, remaining float64) killPoint {
	least := math.MaxInt
	var cands []string
	for _, k := range kinds {
		switch n := planned[k]; {
		case n < least:
			least, cands = n, []string{k}
		case n == least:
			cands = append(cands, k)
		}
	}
	kind := cands[rng.IntN(len(cands))]
	if kind == timedKill {
		return killPoint{site: kind, after: time.Duration(rng.Int64N(max(int64(remaining*float64(ref.wall)), 1)))}
	}
	hits := max(int(math.Ceil(remaining*float64(ref.counts[kind]))), 1)
	return killPoint{site: kind, n: 1 + rng.IntN(hits)}
}

// checkCrashTrial checks a trial's store after its last run finished: the
// figures are the reference's bytes, the event log replays cleanly, and
// another run executes nothing.
func checkCrashTrial(t *testing.T, bin, root, st, figs string, ref crashRef) {
	t.Helper()
	got := readFigures(t, figs)
	var extra []string
	for name := range got {
		if _, ok := ref.figures[name]; !ok {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		t.Errorf("figures directory holds files an uninterrupted run does not write: %v", extra)
	}
	sameFigures(t, ref.figures, got)

	res, _ := pipelineRun(t, bin, root, crashArgs(root, st, figs, 2)[2:]...)
	if len(res.Executed) != 0 || len(res.Cached) != len(ref.tasks) {
		t.Errorf("a run after the trial executed %d tasks (%v) and reused %d; want 0 and %d",
			len(res.Executed), res.Executed, len(res.Cached), len(ref.tasks))
	}
	if !mapsEqual(figureIDs(res), ref.ids) {
		t.Errorf("a run after the trial reports figures\n%v\nwant\n%v", figureIDs(res), ref.ids)
	}
	if err := replayLog(st, ref.tasks); err != nil {
		t.Error(err)
	}
}

// replayLog reads back everything in the event log of store root st and
// checks it against the store: every run's events and every task's events
// and iterations decode; each task's recorded last state is its last state
// event, is done or cached, and names the output its action record does;
// the output of every done or cached event is intact in the store; and the
// last run finished.
func replayLog(st string, tasks []string) error {
	s, err := store.Open(st)
	if err != nil {
		return err
	}
	log, err := events.Open(filepath.Join(st, "events.db"), events.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer log.Close()
	var errs []error
	checked := map[string]bool{}
	runs, err := log.Runs()
	if err != nil {
		return err
	}
	if len(runs) == 0 || runs[len(runs)-1].State != events.RunFinished {
		errs = append(errs, fmt.Errorf("the last of %d runs did not finish: %+v", len(runs), runs[len(runs)-1:]))
	}
	for _, r := range runs {
		evs, err := log.RunEvents(r.Run)
		if err != nil {
			errs = append(errs, fmt.Errorf("run %d: %w", r.Run, err))
			continue
		}
		for i, ev := range evs {
			if ev.Run != r.Run || (i > 0 && ev.Seq <= evs[i-1].Seq) {
				errs = append(errs, fmt.Errorf("run %d: event %d is %+v after seq %d", r.Run, i, ev, evs[max(i-1, 0)].Seq))
			}
			if ev.Type == events.TypeState && (ev.State == events.StateDone || ev.State == events.StateCached) && !checked[ev.Output] {
				checked[ev.Output] = true
				if err := checkOutput(s, ev.Output); err != nil {
					errs = append(errs, fmt.Errorf("run %d, %s %s: %w", r.Run, ev.Task, ev.State, err))
				}
			}
		}
	}
	states, err := log.LastStates()
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	var have []string
	for _, rec := range states {
		have = append(have, rec.Task)
		if rec.State != events.StateDone && rec.State != events.StateCached {
			errs = append(errs, fmt.Errorf("%s: last state %q, want done or cached", rec.Task, rec.State))
		}
		if err := replayTask(log, rec); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", rec.Task, err))
		}
	}
	if want := slices.Sorted(slices.Values(tasks)); !slices.Equal(have, want) {
		errs = append(errs, fmt.Errorf("the log has last states of %d tasks, the plan %d", len(have), len(want)))
	}
	if _, _, err := log.Stats(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// replayTask checks one task's events and iterations against its recorded
// last state.
func replayTask(log *events.Log, rec events.StateRecord) error {
	evs, err := log.Events(rec.Task)
	if err != nil {
		return err
	}
	var last *events.Event
	for i := range evs {
		if evs[i].Type == events.TypeState {
			last = &evs[i]
		}
	}
	if last == nil || last.Seq != rec.Seq || last.State != rec.State || last.Output != rec.Output {
		return fmt.Errorf("recorded last state %+v is not its last state event %+v", rec, last)
	}
	act, ok, err := log.Action(rec.Action)
	if err != nil || !ok || act.Output != rec.Output {
		return fmt.Errorf("action %s: record %+v (found %v, %v), want output %s", rec.Action, act, ok, err, rec.Output)
	}
	runs, err := log.IterRuns(rec.Task)
	if err != nil {
		return err
	}
	for _, run := range runs {
		if _, err := log.Iterations(rec.Task, run); err != nil {
			return err
		}
	}
	return nil
}

// checkOutput checks that the output manifest out (see
// pipeline/manifest.go) and every entry it names are intact in s.
func checkOutput(s *store.Store, out string) error {
	id, err := store.ParseID(out)
	if err != nil {
		return err
	}
	if !s.Has(id) {
		return fmt.Errorf("output manifest %s missing or corrupt", out)
	}
	data, err := os.ReadFile(s.Path(id))
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if lines[0] != "zorepro-outputs v1" {
		return fmt.Errorf("output %s is not an output manifest", out)
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) != 3 {
			return fmt.Errorf("output %s: line %q", out, l)
		}
		eid, err := store.ParseID(f[1])
		if err != nil {
			return fmt.Errorf("output %s: %w", out, err)
		}
		if !s.Has(eid) {
			return fmt.Errorf("output %s: %s (%s) missing or corrupt", out, f[0], f[1])
		}
	}
	return nil
}
