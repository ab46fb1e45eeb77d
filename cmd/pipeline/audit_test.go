package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"zorepro/pipeline/events"
	"zorepro/pipeline/remote/remotetest"
	"zorepro/pipeline/store"
	"zorepro/pipeline/task"
)

// cli runs the binary and returns its output (stdout and stderr) and exit
// code.
func cli(t *testing.T, bin, dir string, args ...string) (string, int) {
	t.Helper()
	return runBinary(t, bin, dir, (*exec.Cmd).CombinedOutput, args)
}

// cliStdout is cli with stdout alone (stderr carries notes, e.g. the
// profile shown).
func cliStdout(t *testing.T, bin, dir string, args ...string) (string, int) {
	t.Helper()
	return runBinary(t, bin, dir, (*exec.Cmd).Output, args)
}

func runBinary(t *testing.T, bin, dir string, output func(*exec.Cmd) ([]byte, error), args []string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	out, err := output(cmd)
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("%v: %v", args, err)
		}
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// smokeStore gives the test a smoke store of its own in dir/store
// (figures in dir/fig) and returns the binary, the repository root, dir
// and the flags that point a command at that store. The smoke profile
// runs once per test binary, into a template that each test gets a copy
// of (a run gives the same bytes every time; a copy takes a fraction of
// a run, and ten tests take one).
func smokeStore(t *testing.T) (bin, root, dir string, common []string) {
	t.Helper()
	bin, root, dir = binary(t), repoRoot(t), t.TempDir()
	smokeOnce.Do(func() {
		tmpl, err := os.MkdirTemp("", "pipeline-smoke-")
		if err != nil {
			smokeErr = err
			return
		}
		smokeTemplate = tmpl
		res, _ := pipelineRun(t, bin, root, smokeFlags(root, tmpl)...)
		if len(res.Failed) > 0 || len(res.Executed) == 0 {
			smokeErr = fmt.Errorf("the smoke run into the template executed %d tasks, failed %v", len(res.Executed), res.Failed)
		}
	})
	if smokeErr != nil {
		t.Fatal(smokeErr)
	}
	for _, sub := range []string{"store", "fig"} {
		if out, err := exec.Command("cp", "-a", filepath.Join(smokeTemplate, sub), filepath.Join(dir, sub)).CombinedOutput(); err != nil {
			t.Fatalf("copy the smoke template's %s: %v\n%s", sub, err, out)
		}
	}
	return bin, root, dir, smokeFlags(root, dir)
}

// TestMain removes the smoke template after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	remotetest.StopShared()
	if smokeTemplate != "" {
		os.RemoveAll(smokeTemplate)
	}
	os.Exit(code)
}

var (
	smokeOnce     sync.Once
	smokeTemplate string
	smokeErr      error
)

// smokeFlags point a command at dir/store and dir/fig under the smoke
// profile.
func smokeFlags(root, dir string) []string {
	return []string{"--dag", filepath.Join(root, "dag.yaml"), "--profile", "smoke",
		"--store", filepath.Join(dir, "store"), "--figures", filepath.Join(dir, "fig")}
}

// TestAuditReplayVerifyGCOnSmoke audits every smoke figure back to its
// events, replays and verifies tasks, collects garbage, and shows that a
// tampered event is caught by audit and replay.
func TestAuditReplayVerifyGCOnSmoke(t *testing.T) {
	t.Parallel() // no clock in its checks; see tests.md
	bin, root, dir, common := smokeStore(t)
	storeDir, figDir := filepath.Join(dir, "store"), filepath.Join(dir, "fig")
	// A target cuts the DAG down to it and its ancestors, with the same
	// identities: all cached.
	if only, _ := pipelineRun(t, bin, root, append([]string{"plot/fig3c-lqr"}, common...)...); len(only.Executed) != 0 || len(only.Cached) != 35 {
		t.Fatalf("run plot/fig3c-lqr after a full run: executed %v, %d cached (want 0, 35: 27 and the 8 tuning trials)", only.Executed, len(only.Cached))
	}

	// Every point of every figure equals its recomputation from events.
	pngs, _ := filepath.Glob(filepath.Join(figDir, "*.png"))
	if len(pngs) < 6 {
		t.Fatalf("smoke made %d figures", len(pngs))
	}
	allEqual := regexp.MustCompile(`(\d+) of (\d+) plotted points equal, bit for bit`)
	for _, png := range pngs {
		out, code := cli(t, bin, root, withFlags([]string{"audit", filepath.Base(png)}, common...)...)
		m := allEqual.FindStringSubmatch(out)
		if code != 0 || m == nil || m[1] != m[2] || m[1] == "0" {
			t.Fatalf("audit %s: exit %d\n%s", png, code, out)
		}
	}

	// A figure by its name alone is its recorded SVG; a name that is no
	// figure is refused with the names that are.
	if out, code := cli(t, bin, root, withFlags([]string{"audit", "fig3c-lqr"}, common...)...); code != 0 || !strings.Contains(out, "plotted points equal, bit for bit") {
		t.Errorf("audit fig3c-lqr: exit %d\n%s", code, out)
	}
	if out, code := cli(t, bin, root, withFlags([]string{"audit", "fig9"}, common...)...); code != 2 || !strings.Contains(out, "fig9: no such file") || !strings.Contains(out, "recorded: fig1-mnist.svg, ") || !strings.Contains(out, "fig3c-lqr.svg") {
		t.Errorf("audit of no figure: exit %d\n%s", code, out)
	}

	checkShow(t, bin, root, common)

	point := checkAuditPoint(t, bin, root, common)

	// Replay and verify reproduce the recorded runs bit for bit.
	out, code := cli(t, bin, root, withFlags([]string{"replay", "train/linreg/d=10/method=ars/seed=5488"}, common...)...)
	if code != 0 || !strings.Contains(out, "300 recorded, 300 recomputed, 300 equal bit for bit") || !strings.Contains(out, ": identical") {
		t.Fatalf("replay: exit %d\n%s", code, out)
	}
	out, code = cli(t, bin, root, withFlags([]string{"replay", "train/linreg/d=10/method=ars/seed=5488", "--until", "40"}, common...)...)
	if code != 0 || !strings.Contains(out, "40 recorded, 40 recomputed, 40 equal") {
		t.Fatalf("replay --until 40: exit %d\n%s", code, out)
	}
	out, code = cli(t, bin, root, withFlags([]string{"verify", "--sample", "12", "--seed", "7"}, common...)...)
	if code != 0 || strings.Count(out, "\nok ") != 12 || !strings.Contains(out, "12 of 12 tasks reproduced") {
		t.Fatalf("verify: exit %d\n%s", code, out)
	}

	// gc removes an unreferenced entry and nothing a run needs.
	st, err := store.Open(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	orphan, _ := st.Put([]byte("unreferenced"))
	out, code = cli(t, bin, root, withFlags([]string{"gc"}, common...)...)
	if code != 0 || !strings.Contains(out, "removed 1 unreferenced entries") || st.Has(orphan) {
		t.Fatalf("gc: exit %d\n%s", code, out)
	}
	if again, _ := pipelineRun(t, bin, root, common...); len(again.Executed) != 0 {
		t.Fatalf("run after gc executed %v", again.Executed)
	}

	checkCorruptFigureEntry(t, bin, root, st, common)

	// Tamper with the recorded test loss behind the audited point: audit
	// and replay both catch it.
	tamper(t, filepath.Join(storeDir, "events.db"), "evaluate/linreg/d=10/method=ars/seed=5488", 5000)
	out, code = cli(t, bin, root, point...)
	if code != 1 || !strings.Contains(out, "DIFFERENT") || !strings.Contains(out, "the event gives") {
		t.Fatalf("audit of a tampered event: exit %d\n%s", code, out)
	}
	out, code = cli(t, bin, root, withFlags([]string{"replay", "evaluate/linreg/d=10/method=ars/seed=5488", "--events"}, common...)...)
	if code != 1 || !strings.Contains(out, "first difference at event 249 (metric test_loss)") ||
		!strings.Contains(out, "    = iteration 249, samples 4980") || !strings.Contains(out, "    - iteration 250, samples 5000") ||
		!strings.Contains(out, "    + iteration 250, samples 5000") {
		t.Fatalf("replay of a tampered task: exit %d\n%s", code, out)
	}
}

// checkShow checks show: a task's output files, one file's exact bytes,
// and clear errors.
func checkShow(t *testing.T, bin, root string, common []string) {
	t.Helper()
	tune := "tune/linreg/d=10/method=ars"
	out, code := cli(t, bin, root, withFlags([]string{"show", tune}, common...)...)
	if code != 0 || !regexp.MustCompile(`(?m)^  chosen\.json +\d+ bytes  xxh64-[0-9a-f]{16}\n  table\.csv +\d+ bytes  xxh64-`).MatchString(out) {
		t.Fatalf("show %s: exit %d\n%s", tune, code, out)
	}
	out, code = cliStdout(t, bin, root, withFlags([]string{"show", tune, "table.csv"}, common...)...)
	if code != 0 || !strings.HasPrefix(out, "point,alpha,directions,nu,top,mean_test_loss,") || !strings.Contains(out, ",yes,") {
		t.Fatalf("show %s table.csv: exit %d\n%s", tune, code, out)
	}
	if out, code = cli(t, bin, root, withFlags([]string{"show", tune, "nope.csv"}, common...)...); code != 2 || !strings.Contains(out, `has no file "nope.csv"; its files are chosen.json, table.csv`) {
		t.Fatalf("show of a missing file: exit %d\n%s", code, out)
	}
	if out, code = cli(t, bin, root, withFlags([]string{"show", "tune/nosuch"}, common...)...); code != 2 {
		t.Fatalf("show of an unknown task: exit %d\n%s", code, out)
	}
}

// checkAuditPoint traces one point to the runs, streams and events behind
// it, and returns the audit command it ran.
func checkAuditPoint(t *testing.T, bin, root string, common []string) []string {
	t.Helper()
	point := withFlags([]string{"audit", "fig2-linreg.svg", "--panel", "10", "--curve", "ars", "--x", "5000"}, common...)
	out, code := cli(t, bin, root, point...)
	for _, want := range []string{
		"point panel 10, curve ars, samples = 5000", "equal bit for bit",
		"evaluate evaluate/linreg/d=10/method=ars/seed=5488", "train    train/linreg/d=10/method=ars/seed=5488",
		"data     generate/linreg/d=10/seed=5488", "tune     tune/linreg/d=10/method=ars", "chose grid point",
		"streams: batch[1 indices] root 5488", "event: iteration 250, samples 5000", "samples consumed 5000",
		"holds the evaluated snapshot",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("audit of one point lacks %q", want)
		}
	}
	if code != 0 || t.Failed() {
		t.Fatalf("exit %d\n%s", code, out)
	}
	js, code := cliStdout(t, bin, root, append(point, "--json")...)
	var rep struct {
		Points []struct {
			Equal   bool
			Plotted struct{ N int }
			Seeds   []struct {
				Seed  uint64
				Event *task.Iter
			}
		}
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil || code != 0 {
		t.Fatalf("audit --json: %v (exit %d)\n%s", err, code, js)
	}
	if len(rep.Points) != 1 || !rep.Points[0].Equal || len(rep.Points[0].Seeds) != rep.Points[0].Plotted.N || rep.Points[0].Seeds[0].Event.Samples != 5000 {
		t.Fatalf("audit --json: %+v", rep)
	}
	return point
}

// checkCorruptFigureEntry checks that a stored figure entry that fails its
// hash check is named as corrupt by show, audit and verify, each exiting
// 1; verify lists it among the tasks of its selection instead of leaving
// it out.
func checkCorruptFigureEntry(t *testing.T, bin, root string, st *store.Store, common []string) {
	t.Helper()
	restore := corruptEntry(t, bin, root, st, "plot/fig2-linreg", "fig2-linreg.csv", common)
	out, code := cli(t, bin, root, withFlags([]string{"show", "plot/fig2-linreg"}, common...)...)
	if code != 1 || !regexp.MustCompile(`fig2-linreg\.csv +CORRUPT`).MatchString(out) || !strings.Contains(out, "1 of the") {
		t.Fatalf("show of an output with a corrupt entry: exit %d\n%s", code, out)
	}
	out, code = cli(t, bin, root, withFlags([]string{"audit", "fig2-linreg.svg"}, common...)...)
	if code != 1 || !strings.Contains(out, "fig2-linreg.csv of plot/fig2-linreg") || !strings.Contains(out, "corrupt entry") {
		t.Fatalf("audit of a figure whose CSV is corrupt: exit %d\n%s", code, out)
	}
	js, code := cliStdout(t, bin, root, withFlags([]string{"verify", "plot/fig2-linreg", "--json"}, common...)...)
	var sum struct {
		Selected, Reproduced int
		Verdicts             map[string]int
		Tasks                []struct{ Task, Verdict, Reason string }
	}
	if err := json.Unmarshal([]byte(js), &sum); err != nil || code != 1 {
		t.Fatalf("verify --json of a selection with a corrupt output: %v (exit %d)\n%s", err, code, js)
	}
	total := 0
	for _, n := range sum.Verdicts {
		total += n
	}
	last := sum.Tasks[len(sum.Tasks)-1]
	if total != sum.Selected || len(sum.Tasks) != sum.Selected || sum.Reproduced != sum.Selected-1 ||
		sum.Verdicts["corrupt output"] != 1 || last.Task != "plot/fig2-linreg" || last.Verdict != "corrupt output" || !strings.Contains(last.Reason, "fig2-linreg.csv") {
		t.Fatalf("verify of a selection with a corrupt output: %+v", sum)
	}
	restore()
}

// corruptEntry overwrites the stored copy of one file of a task's latest
// output and returns a function that puts the right bytes back.
func corruptEntry(t *testing.T, bin, root string, st *store.Store, task, file string, common []string) func() {
	t.Helper()
	js, code := cliStdout(t, bin, root, withFlags([]string{"show", task, "--json"}, common...)...)
	var shown struct{ Files []struct{ Name, ID string } }
	if err := json.Unmarshal([]byte(js), &shown); err != nil || code != 0 {
		t.Fatalf("show %s --json: %v (exit %d)\n%s", task, err, code, js)
	}
	for _, f := range shown.Files {
		if f.Name != file {
			continue
		}
		id, err := store.ParseID(f.ID)
		if err != nil {
			t.Fatal(err)
		}
		good, err := os.ReadFile(st.Path(id))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(st.Path(id), append([]byte("#"), good...), 0o644); err != nil {
			t.Fatal(err)
		}
		return func() {
			if err := os.WriteFile(st.Path(id), good, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Fatalf("%s's output has no file %s: %+v", task, file, shown)
	return nil
}

// tamper rewrites the test_loss a task recorded at a sample count.
func tamper(t *testing.T, path, task string, samples int64) {
	t.Helper()
	log, err := events.Open(path, events.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	runs, err := log.IterRuns(task)
	if err != nil || len(runs) == 0 {
		t.Fatalf("runs of %s: %v %v", task, runs, err)
	}
	its, err := log.Iterations(task, runs[len(runs)-1])
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for i := range its {
		if its[i].Samples == samples {
			for j := range its[i].Metrics {
				if its[i].Metrics[j].Name == "test_loss" {
					its[i].Metrics[j].Value *= 1.0000001
					found = true
				}
			}
		}
	}
	if !found {
		t.Fatalf("%s recorded no test_loss at %d samples", task, samples)
	}
	// One block keyed by the first iteration replaces the recorded one.
	w := log.NewWriter(events.WriterOptions{})
	w.Append(events.Event{Type: events.TypeIter, Run: runs[len(runs)-1], Task: task, Iters: its})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

// Every command that reads a recorded output checks all of it first and
// names a damaged entry, exiting 1 (issue 27: audit of a figure whose own
// PNG entry was corrupt said "640 of 640 plotted points equal", replay
// said "output identical" against a corrupt recorded output, audit --x
// left out the trajectory check, each exiting 0).
func TestDamagedOutputsAreNamedByEveryReader(t *testing.T) {
	t.Parallel() // no clock in its checks; see tests.md
	bin, root, dir, common := smokeStore(t)
	st, err := store.Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	expect := func(what string, args []string, want ...string) {
		t.Helper()
		out, code := cli(t, bin, root, withFlags(args, common...)...)
		if code != 1 {
			t.Errorf("%s: exit %d, want 1\n%s", what, code, out)
		}
		for _, w := range append(want, "recorded output damaged") {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q\n%s", what, w, out)
			}
		}
	}

	// The figure's own PNG entry, while the exported file is intact.
	restore := corruptEntry(t, bin, root, st, "plot/fig3c-lqr", "fig3c-lqr.png", common)
	expect("audit of a figure whose stored PNG is corrupt", []string{"audit", "fig3c-lqr.png"}, "fig3c-lqr.png of plot/fig3c-lqr", "corrupt entry")
	expect("audit of the same figure's SVG", []string{"audit", "fig3c-lqr.svg"}, "fig3c-lqr.png of plot/fig3c-lqr")
	expect("show of another file of that output", []string{"show", "plot/fig3c-lqr", "fig3c-lqr.csv"}, "fig3c-lqr.png of plot/fig3c-lqr")
	restore()

	// The recorded output a replay compares with.
	task := "evaluate/linreg/d=10/method=ars/seed=5488"
	restore = corruptEntry(t, bin, root, st, task, "curve.csv", common)
	expect("replay against a corrupt recorded output", []string{"replay", task}, "curve.csv of "+task)
	restore()

	// The trajectory behind an audited point.
	train := "train/linreg/d=10/method=ars/seed=5488"
	restore = corruptEntry(t, bin, root, st, train, "trajectory", common)
	expect("audit --x of a point whose trajectory is corrupt",
		[]string{"audit", "fig2-linreg.svg", "--panel", "10", "--curve", "ars", "--x", "5000"}, "trajectory of "+train)
	restore()

	// Restored, every reader is content again.
	if out, code := cli(t, bin, root, withFlags([]string{"audit", "fig3c-lqr.png"}, common...)...); code != 0 {
		t.Fatalf("audit after the restore: exit %d\n%s", code, out)
	}
}
