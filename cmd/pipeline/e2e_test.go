package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// These tests drive the real binary, built with its code manifest exactly
// as `make build` does.

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// buildTags are the tags `make` builds with: MuJoCo is in dag.yaml, so the
// binary needs it; without libmujoco-dev the tests that run the whole DAG
// are skipped (make test installs it).
func buildTags(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat("/usr/include/mujoco/mujoco.h"); err != nil {
		t.Skip("MuJoCo is not installed (make test installs libmujoco-dev); dag.yaml needs it")
	}
	if openblasTag {
		return "mujoco openblas"
	}
	return "mujoco"
}

// build compiles ./cmd/pipeline of the module at src into out, generating
// and stamping its code manifest.
func build(t testing.TB, src, out string) {
	t.Helper()
	tags := buildTags(t)
	manifest := filepath.Join(src, "pipeline/codeid/manifest/manifest.json")
	gen := exec.Command("go", "run", "./pipeline/codeid/gen", "-tags", tags, "-o", manifest, "-stamp")
	gen.Dir = src
	stamp, err := gen.Output()
	if err != nil {
		t.Fatalf("generate manifest: %v\n%s", err, stderrOf(err))
	}
	cmd := exec.Command("go", "build", "-tags", tags, "-ldflags", "-X zorepro/pipeline/codeid.Stamp="+strings.TrimSpace(string(stamp)), "-o", out, "./cmd/pipeline")
	cmd.Dir = src
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

func binary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pipeline-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "pipeline")
		build(t, repoRoot(t), builtBin)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

type runResult struct {
	Executed, Cached, Failed, Skipped []string
	Figures                           map[string]struct{ Path, ID string }
	Errors                            map[string]string
}

// pipelineRun runs the binary in dir and decodes its --json output.
func pipelineRun(t *testing.T, bin, dir string, args ...string) (runResult, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"run", "--json"}, args...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pipeline run %v: %v\n%s", args, err, stderr.String())
	}
	var res runResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("decode %q: %v", stdout.String(), err)
	}
	return res, stderr.String()
}

func figureIDs(res runResult) map[string]string {
	out := map[string]string{}
	for name, f := range res.Figures {
		out[name] = f.ID
	}
	return out
}

func readFigures(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func sameFigures(t *testing.T, a, b map[string][]byte) {
	t.Helper()
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("figure sets differ: %d vs %d files", len(a), len(b))
	}
	for name, x := range a {
		if !bytes.Equal(x, b[name]) {
			t.Errorf("figure %s differs", name)
		}
	}
}

func TestSmokeDeterministicAcrossJobsAndCached(t *testing.T) {
	t.Parallel() // no clock in its checks; see tests.md
	bin := binary(t)
	root := repoRoot(t)
	dir := t.TempDir()
	dagPath := filepath.Join(root, "dag.yaml")
	r1, _ := pipelineRun(t, bin, root, "--dag", dagPath, "--profile", "smoke", "--jobs", "1", "--store", filepath.Join(dir, "s1"), "--figures", filepath.Join(dir, "f1"))
	r4, _ := pipelineRun(t, bin, root, "--dag", dagPath, "--profile", "smoke", "--jobs", "4", "--store", filepath.Join(dir, "s4"), "--figures", filepath.Join(dir, "f4"))
	if len(r1.Executed) == 0 || len(r1.Cached) != 0 {
		t.Fatalf("first run: %+v", r1)
	}
	if got, want := figureIDs(r4), figureIDs(r1); !mapsEqual(got, want) || len(got) == 0 {
		t.Fatalf("figure IDs differ between --jobs 1 and 4:\n%v\n%v", want, got)
	}
	sameFigures(t, readFigures(t, filepath.Join(dir, "f1")), readFigures(t, filepath.Join(dir, "f4")))
	again, _ := pipelineRun(t, bin, root, "--dag", dagPath, "--profile", "smoke", "--jobs", "2", "--store", filepath.Join(dir, "s1"), "--figures", filepath.Join(dir, "f1"))
	if len(again.Executed) != 0 || len(again.Cached) != len(r1.Executed) {
		t.Fatalf("second run executed %v", again.Executed)
	}
	if !mapsEqual(figureIDs(again), figureIDs(r1)) {
		t.Fatal("cached run reports different figures")
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestKillMidTaskThenResumeGivesIdenticalBytes(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	dagPath, _ := filepath.Abs("testdata/resume.yaml")
	ref, _ := pipelineRun(t, bin, dir, "--dag", dagPath, "--store", "ref", "--figures", "ref-fig", "--jobs", "2")

	for attempt := 0; ; attempt++ {
		store := filepath.Join(dir, "killed")
		os.RemoveAll(store)
		cmd := exec.Command(bin, "run", "--dag", dagPath, "--store", store, "--figures", filepath.Join(dir, "killed-fig"), "--jobs", "2", "--checkpoint-interval", "20ms")
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(700+300*attempt) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		if err == nil {
			if attempt > 3 {
				t.Fatal("the run keeps finishing before the kill; the test DAG is too small for this machine")
			}
			continue // finished before the kill: try with the kill earlier? no: later attempts wait longer, so shrink instead
		}
		res, _ := pipelineRun(t, bin, dir, "--dag", dagPath, "--store", store, "--figures", filepath.Join(dir, "killed-fig"), "--jobs", "2")
		if !mapsEqual(figureIDs(res), figureIDs(ref)) {
			t.Fatalf("figures after kill+resume differ:\n%v\n%v", figureIDs(ref), figureIDs(res))
		}
		sameFigures(t, readFigures(t, filepath.Join(dir, "ref-fig")), readFigures(t, filepath.Join(dir, "killed-fig")))
		// At least one train task resumed from a checkpoint rather than
		// starting over.
		resumed := false
		for _, task := range []string{"train/linreg/d=10/method=sgd/seed=5488", "train/linreg/d=10/method=sgd/seed=7151"} {
			out, err := exec.Command(bin, "events", task, "--store", store).Output()
			if err != nil {
				t.Fatalf("events %s: %v", task, err)
			}
			if strings.Contains(string(out), "state=resumed") {
				resumed = true
			}
		}
		if !resumed {
			t.Fatal("no train task resumed from a checkpoint after SIGKILL")
		}
		return
	}
}

// copyModule copies the module's sources (not build outputs or stores).
func copyModule(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			switch rel {
			case ".git", "bin", "artifacts", "figures", ".data":
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	// The data sets are not sources: link them rather than copy them.
	if _, err := os.Stat(filepath.Join(src, ".data")); err == nil {
		if err := os.Symlink(filepath.Join(src, ".data"), filepath.Join(dst, ".data")); err != nil {
			t.Fatal(err)
		}
	}
}

func appendComment(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("\n// an edit that changes the file but not the behaviour\n"); err != nil {
		t.Fatal(err)
	}
}

func TestCodeEditRerunsOnlyTasksCompiledFromIt(t *testing.T) {
	t.Parallel() // no clock in its checks; see tests.md
	if testing.Short() {
		t.Skip("builds the binary three times")
	}
	src := t.TempDir()
	copyModule(t, repoRoot(t), src)
	bin := filepath.Join(t.TempDir(), "pipeline")
	args := []string{"--profile", "smoke", "--store", "store", "--figures", "fig", "--jobs", "2"}

	build(t, src, bin)
	first, _ := pipelineRun(t, bin, src, args...)
	if len(first.Executed) == 0 {
		t.Fatal("nothing ran")
	}

	appendComment(t, filepath.Join(src, "algos/ars/ars.go"))
	build(t, src, bin)
	res, _ := pipelineRun(t, bin, src, args...)
	// Package algos/ars is ARS V2-t (method ars: linear regression, MNIST)
	// and V1 (method arsv1: LQR, MuJoCo): exactly the tune and train tasks
	// that run either rerun. The edit leaves their output bytes unchanged,
	// so evaluation and the plots are cut off.
	var want []string
	envs := map[string]bool{}
	for _, task := range first.Executed {
		kind, rest, _ := strings.Cut(task, "/")
		env, _, _ := strings.Cut(rest, "/")
		if env == "horizon" { // the horizon sweep runs MuJoCo
			env = "mujoco"
		}
		if (kind == "tune" || kind == "train") && (strings.Contains(task+"/", "/method=ars/") || strings.Contains(task+"/", "/method=arsv1/")) {
			want = append(want, task)
			envs[env] = true
		}
	}
	if len(envs) != 4 {
		t.Fatalf("the smoke profile runs ARS on %v, want linreg, mnist, lqr and mujoco", envs)
	}
	if !slices.Equal(res.Executed, want) {
		t.Fatalf("after editing algos/ars/ars.go executed\n  %v\nwant\n  %v", res.Executed, want)
	}

	appendComment(t, filepath.Join(src, "stages/plot/render.go"))
	build(t, src, bin)
	res, _ = pipelineRun(t, bin, src, args...)
	if len(res.Executed) == 0 {
		t.Fatal("after editing stages/plot/render.go nothing reran")
	}
	for _, task := range res.Executed {
		if !strings.HasPrefix(task, "plot/") {
			t.Fatalf("after editing stages/plot/render.go, %s reran; want only plots (%v)", task, res.Executed)
		}
	}

	appendComment(t, filepath.Join(src, "algos/sgd/sgd.go"))
	build(t, src, bin)
	res, _ = pipelineRun(t, bin, src, args...)
	for _, task := range res.Executed {
		if !strings.Contains(task, "method=sgd") {
			t.Fatalf("after editing algos/sgd/sgd.go, %s reran", task)
		}
	}
	// One SGD for linear regression and MNIST: the smoke profile's three
	// linear-regression and two MNIST SGD train tasks.
	if len(res.Executed) != 5 || !slices.ContainsFunc(res.Executed, func(s string) bool { return strings.HasPrefix(s, "train/mnist/") }) {
		t.Fatalf("after editing algos/sgd/sgd.go executed %v, want the five SGD train tasks", res.Executed)
	}

	// why names the edited package.
	out, err := exec.Command(bin, "why", "train/linreg/d=10/method=sgd/seed=5488", "--profile", "smoke", "--store", filepath.Join(src, "store"), "--dag", filepath.Join(src, "dag.yaml")).CombinedOutput()
	if err != nil {
		t.Fatalf("why: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "code-pkg zorepro/algos/sgd") {
		t.Fatalf("why does not name the changed package:\n%s", out)
	}
}

// startLongRun starts `run` of testdata/long.yaml (dagPath) in dir, with
// the given --snapshot-interval, in the background; it is killed at the
// test's end if still running.
func startLongRun(t *testing.T, bin, dir, dagPath, snapshotInterval string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "run", "--dag", dagPath, "--store", "store", "--figures", "fig", "--snapshot-interval", snapshotInterval)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func TestSecondRunOnALockedStoreFailsAtOnce(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	dagPath, _ := filepath.Abs("testdata/long.yaml")
	// No snapshot: every command, read-only ones too, is turned away.
	first := startLongRun(t, bin, dir, dagPath, "0")
	// Wait for the first run to create and lock its log.
	for i := 0; i < 100; i++ {
		if _, err := os.Stat(filepath.Join(dir, "store", "events.db")); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	// A second run, and every command that reads or collects the store,
	// is turned away with the same message within the lock timeout.
	for _, args := range [][]string{
		{"run"}, {"status"}, {"audit", "fig/any.png"}, {"verify", "--all"}, {"replay", "train/a"}, {"gc"},
	} {
		start := time.Now()
		second := exec.Command(bin, withFlags(args, "--dag", dagPath, "--store", "store", "--figures", "fig")...)
		second.Dir = dir
		out, err := second.CombinedOutput()
		if err == nil {
			t.Fatalf("%v on a locked store succeeded", args)
		}
		if code := second.ProcessState.ExitCode(); code != 1 {
			t.Errorf("%v: exit code %d, want 1", args, code)
		}
		if !strings.Contains(string(out), "locked by another pipeline process") {
			t.Errorf("%v: message: %s", args, out)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%v: took %v to give up", args, d)
		}
	}
	if err := first.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	// Nothing was corrupted: once the lock is released the log reads.
	st := exec.Command(bin, "status", "--dag", dagPath, "--store", "store")
	st.Dir = dir
	if out, err := st.CombinedOutput(); err != nil || !strings.Contains(string(out), "interrupted") {
		t.Fatalf("status after the lock was released: %v\n%s", err, out)
	}
}

func TestSIGINTSavesProgressAndExits130(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	dagPath, _ := filepath.Abs("testdata/resume.yaml")
	ref, _ := pipelineRun(t, bin, dir, "--dag", dagPath, "--store", "ref", "--figures", "ref-fig")
	args := []string{"run", "--dag", dagPath, "--store", "int", "--figures", "int-fig", "--checkpoint-interval", "1h"}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(800 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if err == nil {
		t.Skip("the run finished before the interrupt; the test DAG is too small for this machine")
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit code %d, want 130\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "progress was saved; run again to resume") {
		t.Errorf("stderr: %s", stderr.String())
	}
	// With a one-hour interval, the only checkpoint is the one taken on
	// interrupt; the rerun must start from it and end with the same bytes.
	res, _ := pipelineRun(t, bin, dir, "--dag", dagPath, "--store", "int", "--figures", "int-fig")
	if !mapsEqual(figureIDs(res), figureIDs(ref)) {
		t.Fatalf("figures differ after interrupt and resume")
	}
	out, _ := exec.Command(bin, "events", "train/linreg/d=10/method=sgd/seed=5488", "--store", filepath.Join(dir, "int")).Output()
	if !strings.Contains(string(out), "state=interrupted") || !strings.Contains(string(out), "state=resumed") {
		t.Fatalf("events lack interrupted/resumed:\n%.2000s", out)
	}
}

// While a run holds the log, read-only commands read its snapshot (and say
// so); a second run and gc are still turned away.
func TestReadOnlyCommandsReadTheRunsSnapshot(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	dagPath, _ := filepath.Abs("testdata/long.yaml")
	first := startLongRun(t, bin, dir, dagPath, "100ms")
	snap := filepath.Join(dir, "store", "events.db.snapshot")
	for i := 0; i < 200; i++ {
		if _, err := os.Stat(snap); err == nil {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	cmd := func(args ...string) (string, string, int) {
		c := exec.Command(bin, withFlags(args, "--dag", dagPath, "--store", "store", "--figures", "fig")...)
		c.Dir = dir
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		c.Run()
		return out.String(), errb.String(), c.ProcessState.ExitCode()
	}
	// The snapshot lags the log by up to an interval plus a commit delay:
	// poll until it shows the train task started.
	var out, errs string
	var code int
	for i := 0; i < 50; i++ {
		out, errs, code = cmd("status")
		if strings.Contains(out, "started     train/linreg/d=10/method=sgd/seed=5488") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code != 0 || !regexp.MustCompile(`note: run 1 is in progress and holds \S+; reading its snapshot`).MatchString(errs) ||
		!strings.Contains(out, "started     train/linreg/d=10/method=sgd/seed=5488") || !strings.Contains(out, "done        generate/linreg/d=10/seed=5488") {
		t.Fatalf("status during a run: exit %d\n%s\n%s", code, out, errs)
	}
	if out, errs, code := cmd("events", "generate/linreg/d=10/seed=5488"); code != 0 || !strings.Contains(out, "state=done") {
		t.Fatalf("events during a run: exit %d\n%s\n%s", code, out, errs)
	}
	for _, args := range [][]string{{"run"}, {"gc"}} {
		if _, errs, code := cmd(args...); code != 1 || !strings.Contains(errs, "locked by another pipeline process") {
			t.Errorf("%v during a run: exit %d, %s", args, code, errs)
		}
	}

	// A run killed outright leaves its snapshot; the next run removes it
	// at once, so a reader is told that no snapshot of the run in
	// progress exists yet rather than shown the dead run's state.
	first.Process.Kill()
	first.Wait()
	if _, err := os.Stat(snap); err != nil {
		t.Fatalf("SIGKILL left no snapshot to test with: %v", err)
	}
	second := startLongRun(t, bin, dir, dagPath, "1h")
	for i := 0; i < 200; i++ {
		if _, err := os.Stat(snap); os.IsNotExist(err) {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if _, err := os.Stat(snap); !os.IsNotExist(err) {
		t.Fatalf("the second run did not remove the killed run's snapshot: %v", err)
	}
	if _, errs, code := cmd("status"); code != 1 || !strings.Contains(errs, "a run is in progress") || !strings.Contains(errs, "has taken no snapshot yet") {
		t.Errorf("status during a run without a snapshot: exit %d, %s", code, errs)
	}
	// A run that ends removes its snapshot; the log itself reads again.
	if err := second.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	second.Wait()
	if _, err := os.Stat(snap); !os.IsNotExist(err) {
		t.Errorf("the snapshot outlived its run: %v", err)
	}
	if out, errs, code := cmd("status"); code != 0 || strings.Contains(errs, "snapshot") || !strings.Contains(out, "interrupted") {
		t.Errorf("status after the run: exit %d\n%s\n%s", code, out, errs)
	}
}
