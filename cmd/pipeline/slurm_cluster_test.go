package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests show the Slurm executor on a cluster that is less kind than
// the tidy one: nodes with other native libraries, jobs that cannot start,
// a flaky or absent controller, a binary rebuilt during the run, a killed
// coordinator. They need the one-node cluster of `make test-slurm`.

// bgRun is a `pipeline run` in the background.
type bgRun struct {
	cmd            *exec.Cmd
	stdout, stderr syncBuffer
	start          time.Time
	done           chan error
}

func startRun(t *testing.T, bin, dir string, env []string, args ...string) *bgRun {
	t.Helper()
	r := &bgRun{cmd: exec.Command(bin, append([]string{"run", "--json"}, args...)...), done: make(chan error, 1)}
	r.cmd.Dir = dir
	r.cmd.Env = append(os.Environ(), env...)
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	r.start = time.Now()
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	t.Cleanup(func() {
		r.cmd.Process.Kill()
		<-r.done
		r.done <- nil
	})
	return r
}

// waitFor waits until the run's stderr holds s, and fails the test if the
// run ends first or it takes longer than limit.
func (r *bgRun) waitFor(t *testing.T, s string, limit time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if strings.Contains(r.stderr.String(), s) {
			return
		}
		select {
		case err := <-r.done:
			r.done <- err
			t.Fatalf("the run ended (%v) before its log said %q:\n%s", err, s, r.stderr.String())
		default:
		}
	}
	t.Fatalf("the run's log did not say %q within %s:\n%s", s, limit, r.stderr.String())
}

// wait waits for the run to end and returns its exit code and how long it
// ran.
func (r *bgRun) wait(t *testing.T, limit time.Duration) (int, time.Duration) {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err
		took := time.Since(r.start)
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), took
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, took
	case <-time.After(limit):
		t.Fatalf("the run did not end within %s:\n%s", limit, r.stderr.String())
	}
	return 0, 0
}

func (r *bgRun) result(t *testing.T) runResult {
	t.Helper()
	var res runResult
	if err := json.Unmarshal([]byte(r.stdout.String()), &res); err != nil {
		t.Fatalf("decode %q: %v\n%s", r.stdout.String(), err, r.stderr.String())
	}
	return res
}

// noJobsLeft fails the test if any job of the cluster is still queued or
// running.
func noJobsLeft(t *testing.T) {
	t.Helper()
	if jobs := jobsOf(t, "PENDING,RUNNING,COMPLETING,SUSPENDED"); len(jobs) > 0 {
		t.Errorf("jobs left after the run: %v", jobs)
	}
}

// slurmArgs are the flags of a test run through Slurm.
func slurmArgs(dagPath, store string, more ...string) []string {
	return append([]string{"--executor", "slurm", "--slurm-max-jobs", "4", "--dag", dagPath, "--store", store, "--figures", store + "-fig"}, more...)
}

// A node whose OpenBLAS is another build (simulated by the jobs'
// LD_LIBRARY_PATH, which puts a wrapper of the real library first: it
// reports another configuration) computes other MNIST identities: its
// worker refuses the task, naming the node, its CPU and the native
// library line that differs, and the task fails at once instead of being
// resubmitted.
func TestSlurmNodeWithAnotherBLASIsNamed(t *testing.T) {
	slurmCluster(t)
	if !openblasTag {
		t.Skip("the binary is built without OpenBLAS")
	}
	bin, root, dir := binary(t), repoRoot(t), t.TempDir()
	shim := buildBLASShim(t, dir)
	r := startRun(t, bin, root, nil, append(slurmArgs(filepath.Join(root, "dag.yaml"), filepath.Join(dir, "store"), "--profile", "smoke",
		"--slurm-args", "--export=ALL,LD_LIBRARY_PATH="+shim), "tune/mnist")...)
	code, took := r.wait(t, 3*time.Minute)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d:\n%s", code, exitFailed, r.stderr.String())
	}
	t.Logf("failed after %s", took)
	res := r.result(t)
	host, _ := os.Hostname()
	var msg string
	for _, m := range res.Errors {
		msg = m
	}
	t.Logf("the failure: %s", msg)
	for _, want := range []string{"worker refused the task", "on " + host + " (", `"native blas OpenBLAS (`, "(another build on this node)", "this node's native libraries differ", "(log "} {
		if !strings.Contains(msg, want) {
			t.Errorf("the failure does not say %q:\n%s", want, msg)
		}
	}
	if strings.Contains(r.stderr.String(), "resubmitting") {
		t.Errorf("a refused attempt was resubmitted:\n%s", r.stderr.String())
	}
	noJobsLeft(t)
}

// buildBLASShim compiles a libopenblas.so.0 that forwards to the real one
// but reports another configuration string, as another OpenBLAS build
// would, and returns its directory.
func buildBLASShim(t *testing.T, dir string) string {
	t.Helper()
	real := ""
	for _, p := range []string{"/usr/lib/" + runtime.GOARCH + "-linux-gnu/libopenblas.so.0", "/usr/lib/x86_64-linux-gnu/libopenblas.so.0", "/usr/lib/aarch64-linux-gnu/libopenblas.so.0"} {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			real = r
			break
		}
	}
	if real == "" {
		t.Skip("no libopenblas.so.0 to wrap")
	}
	src := filepath.Join(dir, "shim.c")
	os.WriteFile(src, []byte(`#include <dlfcn.h>
#include <stdio.h>
static void *real;
static void *sym(const char *name) {
	if (!real) real = dlopen(REAL, RTLD_NOW | RTLD_LOCAL);
	return dlsym(real, name);
}
typedef void (*dgemm_fn)(int, int, int, int, int, int, double, const double *, int, const double *, int, double, double *, int);
void cblas_dgemm(int o, int ta, int tb, int m, int n, int k, double al, const double *a, int lda, const double *b, int ldb, double be, double *c, int ldc) {
	((dgemm_fn)sym("cblas_dgemm"))(o, ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc);
}
void openblas_set_num_threads(int n) { ((void (*)(int))sym("openblas_set_num_threads"))(n); }
int openblas_get_num_threads(void) { return ((int (*)(void))sym("openblas_get_num_threads"))(); }
char *openblas_get_corename(void) { return ((char *(*)(void))sym("openblas_get_corename"))(); }
char *openblas_get_config(void) {
	static char buf[512];
	snprintf(buf, sizeof buf, "%s (another build on this node)", ((char *(*)(void))sym("openblas_get_config"))());
	return buf;
}
`), 0o644)
	lib := filepath.Join(dir, "shim")
	os.MkdirAll(lib, 0o755)
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	out, err := exec.Command(cc, "-shared", "-fPIC", "-o", filepath.Join(lib, "libopenblas.so.0"), src, `-DREAL="`+real+`"`, "-ldl").CombinedOutput()
	if err != nil {
		t.Fatalf("compiling the OpenBLAS wrapper: %v\n%s", err, out)
	}
	return lib
}

// Runners asking for more CPUs than any node has wait with a reason that
// never passes (PartitionConfig): the run says so and stops within
// seconds, leaving no job behind.
func TestSlurmJobsThatCanNeverStartStopTheRun(t *testing.T) {
	slurmCluster(t)
	bin, dir := binary(t), t.TempDir()
	out, err := exec.Command("sinfo", "-h", "-o", "%c").Output()
	cpus, cerr := strconv.Atoi(strings.TrimSpace(strings.Split(string(out), "\n")[0]))
	if err != nil || cerr != nil {
		t.Fatalf("sinfo: %v %v %q", err, cerr, out)
	}
	dagPath, _ := filepath.Abs("testdata/resume.yaml")
	r := startRun(t, bin, dir, nil, slurmArgs(dagPath, filepath.Join(dir, "store"), "--slurm-cpus", strconv.Itoa(cpus+1))...)
	code, took := r.wait(t, 2*time.Minute)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d:\n%s", code, exitFailed, r.stderr.String())
	}
	t.Logf("stopped after %s", took)
	for _, want := range []string{"can never start", "PENDING (PartitionConfig)", fmt.Sprintf("--cpus-per-task %d", cpus+1)} {
		if !strings.Contains(r.stderr.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, r.stderr.String())
		}
	}
	noJobsLeft(t)
}

// Runners that wait for a reason that may pass (here a user hold) are
// reported with the reason and its age; when nothing progresses for
// --slurm-stall the run stops, saying why, and cancels them.
func TestSlurmStallStopsTheRun(t *testing.T) {
	slurmCluster(t)
	bin, dir := binary(t), t.TempDir()
	dagPath, _ := filepath.Abs("testdata/resume.yaml")
	r := startRun(t, bin, dir, nil, slurmArgs(dagPath, filepath.Join(dir, "store"), "--slurm-args", "--hold", "--slurm-stall", "12s")...)
	r.waitFor(t, "PENDING (JobHeldUser) for", time.Minute)
	code, took := r.wait(t, 2*time.Minute)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d:\n%s", code, exitFailed, r.stderr.String())
	}
	t.Logf("stopped after %s; log:\n%s", took, r.stderr.String())
	if !strings.Contains(r.stderr.String(), "nothing progressed for 1") || !strings.Contains(r.stderr.String(), "(--slurm-stall 12s)") {
		t.Errorf("the log does not give the stall:\n%s", r.stderr.String())
	}
	noJobsLeft(t)
}

// A transient sbatch failure (a wrapper on PATH fails twice as a busy
// controller does) is retried with backoff and the run ends as a local one
// does; a permanent one (a resource no node has) fails at once, naming
// sbatch's reason.
func TestSlurmSubmitFailures(t *testing.T) {
	slurmCluster(t)
	bin, dir := binary(t), t.TempDir()
	real, err := exec.LookPath("sbatch")
	if err != nil {
		t.Fatal(err)
	}
	wrap := filepath.Join(dir, "wrap")
	os.MkdirAll(wrap, 0o755)
	os.WriteFile(filepath.Join(wrap, "sbatch"), []byte(fmt.Sprintf(`#!/bin/sh
n=$(cat %[1]s/count 2>/dev/null || echo 0); echo $((n + 1)) > %[1]s/count
if [ "$n" -lt 2 ]; then echo "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation" >&2; exit 1; fi
exec %[2]s "$@"
`, wrap, real)), 0o755)
	dagPath, _ := filepath.Abs("testdata/fail.yaml")
	r := startRun(t, bin, dir, []string{"PATH=" + wrap + ":" + os.Getenv("PATH")}, slurmArgs(dagPath, filepath.Join(dir, "flaky"))...)
	r.wait(t, 2*time.Minute)
	res := r.result(t)
	if len(res.Executed) != 1 || res.Executed[0] != "generate/linreg/d=10/seed=5488" || !strings.Contains(r.stderr.String(), "Socket timed out on send/recv operation; retrying with backoff") {
		t.Errorf("executed %v after two transient sbatch failures; log:\n%s", res.Executed, r.stderr.String())
	}

	r = startRun(t, bin, dir, nil, slurmArgs(dagPath, filepath.Join(dir, "gres"), "--slurm-args", "--gres=gpu:1")...)
	code, took := r.wait(t, time.Minute)
	res = r.result(t)
	if code != exitFailed || !strings.Contains(res.Errors["generate/linreg/d=10/seed=5488"], "Invalid generic resource (gres) specification") {
		t.Errorf("exit %d, errors %v; log:\n%s", code, res.Errors, r.stderr.String())
	}
	if took > 30*time.Second || strings.Contains(r.stderr.String(), "retrying") {
		t.Errorf("a permanent sbatch failure was retried (%s):\n%s", took, r.stderr.String())
	}
	noJobsLeft(t)
}

// clusterDir is the directory of the test cluster (SLURM_CONF's).
func clusterDir(t *testing.T) string {
	t.Helper()
	return filepath.Dir(os.Getenv("SLURM_CONF"))
}

// ctld stops or starts the test cluster's controller.
func ctld(t *testing.T, what string) {
	t.Helper()
	out, err := exec.Command(filepath.Join(repoRoot(t), "scripts", "slurm-cluster"), "ctld-"+what, clusterDir(t)).CombinedOutput()
	if err != nil {
		t.Fatalf("slurm-cluster ctld-%s: %v\n%s", what, err, out)
	}
}

// runnerPIDs are the processes of the store's runners.
func runnerPIDs(t *testing.T, store string) []int {
	t.Helper()
	out, _ := exec.Command("pgrep", "-f", "worker --runner "+store).Output()
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 {
		out, _ = exec.Command("pgrep", "-af", "worker --runner").Output()
		t.Fatalf("no runner process of %s; runners:\n%s", store, out)
	}
	return pids
}

// A controller outage longer than --slurm-outage does not fail an attempt
// whose runner goes on working: the run ends with a local run's bytes.
// Frozen runners (no sign of life) past the limit fail their tasks, which
// are asked to stop; the next run resumes them and ends with the same
// bytes, and no job is left.
func TestSlurmControllerOutage(t *testing.T) {
	r := startSlurmResumeRun(t, "--slurm-outage", "3s")
	ctld(t, "stop")
	t.Cleanup(func() { ctld(t, "start") })
	time.Sleep(8 * time.Second)
	ctld(t, "start")
	r.finish(t, "across an outage")

	// The outage again, with the runners frozen.
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	b := startRun(t, r.bin, dir, nil, slurmArgs(r.dag, store, "--checkpoint-interval", "20ms", "--slurm-outage", "4s")...)
	waitRunningTrain(t, store)
	pids := runnerPIDs(t, store)
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGSTOP)
	}
	ctld(t, "stop")
	b.waitFor(t, "controller lost", 2*time.Minute)
	ctld(t, "start")
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGCONT)
	}
	if code, _ := b.wait(t, 2*time.Minute); code != exitFailed {
		t.Fatalf("exit %d, want %d:\n%s", code, exitFailed, b.stderr.String())
	}
	if !strings.Contains(b.stderr.String(), "(--slurm-outage 4s)") {
		t.Errorf("the failure does not name the limit:\n%s", b.stderr.String())
	}
	res2, stderr := runSlurm(t, r.bin, dir, "--dag", r.dag, "--store", store, "--figures", filepath.Join(dir, "fig2"))
	if !mapsEqual(figureIDs(res2), figureIDs(r.ref)) {
		t.Fatalf("figures after the failed run's rerun differ:\n%v\n%v\n%s", figureIDs(r.ref), figureIDs(res2), stderr)
	}
	noJobsLeft(t)
}

// Rebuilding the binary and editing the dag file while a run lasts do not
// reach its jobs: they run the copies the run made at its start. A job
// started after both changes (the first one is cancelled) ends the run
// with the bytes of a local run.
func TestSlurmRebuildDuringRun(t *testing.T) {
	slurmCluster(t)
	bin, dir := binary(t), t.TempDir()
	myBin, myDAG := filepath.Join(dir, "pipeline"), filepath.Join(dir, "dag.yaml")
	copyFile(t, bin, myBin, 0o755)
	src, _ := filepath.Abs("testdata/resume.yaml")
	copyFile(t, src, myDAG, 0o644)
	ref, _ := pipelineRun(t, bin, dir, "--dag", src, "--store", "ref", "--figures", "ref-fig", "--jobs", "2")
	store := filepath.Join(dir, "store")
	r := startRun(t, myBin, dir, nil, slurmArgs(myDAG, store, "--checkpoint-interval", "20ms")...)
	jobs := waitRunningTrain(t, store)
	// A rebuild replaces the file (as go build does); the coordinator
	// runs on from the old one.
	if err := os.WriteFile(myBin+".new", []byte("#!/bin/sh\necho this build is broken; exit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(myBin+".new", myBin); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(myDAG)
	if err := os.WriteFile(myDAG, bytes.ReplaceAll(data, []byte("lr: 0.1"), []byte("lr: 0.2")), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("scancel", jobs...).CombinedOutput(); err != nil {
		t.Fatalf("scancel: %v\n%s", err, out)
	}
	if code, _ := r.wait(t, 3*time.Minute); code != 0 {
		t.Fatalf("exit %d:\n%s", code, r.stderr.String())
	}
	if res := r.result(t); !mapsEqual(figureIDs(res), figureIDs(ref)) {
		t.Fatalf("figures differ:\n%v\n%v", figureIDs(ref), figureIDs(res))
	}
	if !strings.Contains(r.stderr.String(), "submitted runner job") || strings.Count(r.stderr.String(), "submitted runner job") < 2 {
		t.Errorf("no runner was started after the changes:\n%s", r.stderr.String())
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, mode); err != nil {
		t.Fatal(err)
	}
}

// A store reached through a symbolic link names its jobs as through its
// own path; runners are submitted without requeueing (scontrol refuses to
// requeue them).
func TestSlurmJobNamesAndRequeue(t *testing.T) {
	slurmCluster(t)
	bin, dir := binary(t), t.TempDir()
	dagPath, _ := filepath.Abs("testdata/fail.yaml")
	store := filepath.Join(dir, "store")
	os.MkdirAll(store, 0o755)
	os.Symlink(store, filepath.Join(dir, "link"))
	name := func(s string) string {
		_, i, ok := strings.Cut(s, "runner jobs are named ")
		if !ok {
			t.Fatalf("the run names no job:\n%s", s)
		}
		return strings.Fields(i)[0]
	}
	r := startRun(t, bin, dir, nil, slurmArgs(dagPath, filepath.Join(dir, "link"), "generate/linreg")...)
	r.waitFor(t, "submitted runner job ", time.Minute)
	job := strings.Fields(strings.SplitN(r.stderr.String(), "submitted runner job ", 2)[1])[0]
	out, _ := exec.Command("scontrol", "show", "job", job).CombinedOutput()
	if !strings.Contains(string(out), "Requeue=0") {
		t.Errorf("runner job %s is requeueable:\n%s", job, out)
	}
	r.wait(t, time.Minute)
	viaLink := name(r.stderr.String())
	r = startRun(t, bin, dir, nil, slurmArgs(dagPath, store, "--force", "generate/linreg")...)
	r.wait(t, time.Minute)
	if direct := name(r.stderr.String()); direct != viaLink {
		t.Errorf("job names differ: %s through the link, %s directly", viaLink, direct)
	}
}

// SIGTERM on the coordinator stops its attempts (each records its latest
// checkpoint), cancels its jobs and exits 130 within seconds.
func TestSlurmTerminateWithinSeconds(t *testing.T) {
	r := startSlurmResumeRun(t)
	t0 := time.Now()
	r.cmd.Process.Signal(syscall.SIGTERM)
	err := r.cmd.Wait()
	took := time.Since(t0)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitInterrupted {
		t.Fatalf("exit: %v, want %d\n%s", err, exitInterrupted, r.stderr.String())
	}
	t.Logf("stopped %s after SIGTERM", took)
	if took > 20*time.Second {
		t.Errorf("took %s to stop", took)
	}
	noJobsLeft(t)
}
