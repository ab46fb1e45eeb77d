package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"zorepro/pipeline/events"
	"zorepro/pipeline/pipelinetest"
)

// These tests run the pipeline on a real Slurm cluster: the one SLURM_CONF
// names (`make test-slurm` starts a one-node cluster on this machine with
// scripts/slurm-cluster and runs them). Without SLURM_CONF they skip.
func slurmCluster(t *testing.T) {
	t.Helper()
	if os.Getenv("SLURM_CONF") == "" {
		t.Skip("no Slurm cluster: SLURM_CONF is unset (`make test-slurm` starts a one-node cluster and runs these tests)")
	}
	if out, err := exec.Command("sinfo", "-h").CombinedOutput(); err != nil {
		t.Fatalf("SLURM_CONF=%s is set but sinfo fails: %v\n%s", os.Getenv("SLURM_CONF"), err, out)
	}
}

// runSlurm runs `pipeline run --executor slurm` and returns its result and
// stderr; it fails the test if the run fails.
func runSlurm(t *testing.T, bin, dir string, args ...string) (runResult, string) {
	t.Helper()
	return pipelineRun(t, bin, dir, append([]string{"--executor", "slurm", "--slurm-max-jobs", "16"}, args...)...)
}

// lastOutputs maps every task of a store to its latest output ID.
func lastOutputs(t *testing.T, store string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for task, s := range pipelinetest.LastStates(t, store) {
		out[task] = s.Output
	}
	return out
}

// doneEvents counts a task's "done" events across every run of a store.
func doneEvents(t *testing.T, store, task string) int {
	t.Helper()
	evs := pipelinetest.ReadLog(t, store, func(l *events.Log) ([]events.Event, error) { return l.Events(task) })
	n := 0
	for _, ev := range evs {
		if ev.Type == events.TypeState && ev.State == events.StateDone {
			n++
		}
	}
	return n
}

// The smoke profile through Slurm gives the figures, byte for byte, and
// the output of every task that a local run gives; a second run submits
// nothing.
func TestSlurmSmokeMatchesLocal(t *testing.T) {
	slurmCluster(t)
	bin, root, dir := binary(t), repoRoot(t), t.TempDir()
	common := []string{"--dag", filepath.Join(root, "dag.yaml"), "--profile", "smoke"}
	t0 := time.Now()
	local, _ := pipelineRun(t, bin, root, append(common, "--store", filepath.Join(dir, "local"), "--figures", filepath.Join(dir, "local-fig"), "--jobs", "2")...)
	tLocal := time.Since(t0)
	t0 = time.Now()
	remote, stderr := runSlurm(t, bin, root, append(common, "--store", filepath.Join(dir, "slurm"), "--figures", filepath.Join(dir, "slurm-fig"))...)
	tSlurm := time.Since(t0)
	t.Logf("smoke: local %s, slurm %s (%d tasks)", tLocal, tSlurm, len(remote.Executed))
	if !mapsEqual(figureIDs(local), figureIDs(remote)) || len(local.Figures) == 0 {
		t.Fatalf("figure IDs differ:\n%v\n%v", figureIDs(local), figureIDs(remote))
	}
	sameFigures(t, readFigures(t, filepath.Join(dir, "local-fig")), readFigures(t, filepath.Join(dir, "slurm-fig")))
	a, b := lastOutputs(t, filepath.Join(dir, "local")), lastOutputs(t, filepath.Join(dir, "slurm"))
	if len(a) == 0 || !mapsEqual(a, b) {
		t.Fatalf("task outputs differ between local and slurm runs")
	}
	if !strings.Contains(stderr, "slurm: submitted runner job") {
		t.Errorf("the Slurm run's log names no submitted job:\n%s", stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "slurm", "slurm", "batch-*")); len(left) > 0 {
		t.Errorf("job array scripts left after the run: %v", left)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "slurm", "attempts", "*")); len(left) > 0 {
		t.Errorf("attempt files left after the run: %v", left)
	}
	again, stderr := runSlurm(t, bin, root, append(common, "--store", filepath.Join(dir, "slurm"), "--figures", filepath.Join(dir, "slurm-fig"))...)
	if len(again.Executed) != 0 || strings.Contains(stderr, "submitted job") {
		t.Errorf("the second run executed %v; its log:\n%s", again.Executed, stderr)
	}
	// The Slurm store's results move through a bundle like a local one's:
	// imported into an empty store, nothing runs there.
	file := filepath.Join(dir, "slurm.bundle")
	if out, code := cli(t, bin, root, append([]string{"export", "report", "--to", file, "--store", filepath.Join(dir, "slurm")}, common[:4]...)...); code != 0 {
		t.Fatalf("export of the Slurm store: exit %d\n%s", code, out)
	}
	if out, code := cli(t, bin, root, "import", file, "--dag", filepath.Join(root, "dag.yaml"), "--store", filepath.Join(dir, "imported")); code != 0 {
		t.Fatalf("import of the Slurm store's bundle: exit %d\n%s", code, out)
	}
	if res, _ := pipelineRun(t, bin, root, append(common, "--store", filepath.Join(dir, "imported"), "--figures", filepath.Join(dir, "imported-fig"))...); len(res.Executed) != 0 {
		t.Errorf("a run on the imported store executed %v", res.Executed)
	}
}

// jobsOf lists the store's jobs in a state ("RUNNING", ...) as squeue
// shows them (one line per array element: "<job>_<index>").
func jobsOf(t *testing.T, state string) []string {
	t.Helper()
	out, err := exec.Command("squeue", "-h", "-r", "-t", state, "-o", "%i %j").Output()
	if err != nil {
		t.Fatalf("squeue: %v", err)
	}
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if id, name, ok := strings.Cut(line, " "); ok && strings.HasPrefix(name, "zorepro-") {
			ids = append(ids, id)
		}
	}
	return ids
}

// waitRunningTrain waits until a train task's worker has recorded a
// checkpoint in its attempt file (so that a kill leaves something to resume
// from) and returns the running jobs.
func waitRunningTrain(t *testing.T, store string) []string {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		files, _ := filepath.Glob(filepath.Join(store, "attempts", "*", "*.attempt"))
		for _, f := range files {
			a, err := events.ReadAttempt(f)
			if err != nil || !strings.HasPrefix(a.Header.Task, "train/") {
				continue
			}
			for _, ev := range a.Events {
				if ev.Type == events.TypeCheckpoint && ev.Checkpoint.Iteration > 0 {
					if jobs := jobsOf(t, "RUNNING"); len(jobs) > 0 {
						return jobs
					}
				}
			}
		}
	}
	t.Fatal("no train task recorded a checkpoint within 2 minutes")
	return nil
}

func resumed(t *testing.T, bin, store string) bool {
	t.Helper()
	for _, task := range []string{"train/linreg/d=10/method=sgd/seed=5488", "train/linreg/d=10/method=sgd/seed=7151"} {
		out, err := exec.Command(bin, "events", task, "--store", store).Output()
		if err != nil {
			t.Fatalf("events %s: %v", task, err)
		}
		if strings.Contains(string(out), "state=resumed") {
			return true
		}
	}
	return false
}

// slurmResumeRun runs testdata/resume.yaml locally (the reference), then
// starts it through Slurm in the background and waits until a train task's
// job has recorded a checkpoint. It returns the reference, the running
// coordinator (its stdout and stderr captured), the running jobs and the
// store.
type slurmResumeRun struct {
	bin, dir, dag, store string
	ref                  runResult
	cmd                  *exec.Cmd
	stdout, stderr       bytes.Buffer
	jobs                 []string
}

func startSlurmResumeRun(t *testing.T, more ...string) *slurmResumeRun {
	t.Helper()
	slurmCluster(t)
	r := &slurmResumeRun{bin: binary(t), dir: t.TempDir()}
	r.dag, _ = filepath.Abs("testdata/resume.yaml")
	r.ref, _ = pipelineRun(t, r.bin, r.dir, "--dag", r.dag, "--store", "ref", "--figures", "ref-fig", "--jobs", "2")
	r.store = filepath.Join(r.dir, "slurm")
	r.cmd = exec.Command(r.bin, append([]string{"run", "--json", "--executor", "slurm", "--dag", r.dag, "--store", r.store, "--figures", filepath.Join(r.dir, "fig"), "--checkpoint-interval", "20ms"}, more...)...)
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.cmd.Process.Kill(); r.cmd.Wait() })
	r.jobs = waitRunningTrain(t, r.store)
	return r
}

// finish waits for the coordinator to end and checks that it succeeded
// (when: the circumstances, for the message) with the reference's figure
// IDs.
func (r *slurmResumeRun) finish(t *testing.T, when string) {
	t.Helper()
	if err := r.cmd.Wait(); err != nil {
		t.Fatalf("the run failed %s: %v\n%s", when, err, r.stderr.String())
	}
	var res runResult
	if err := json.Unmarshal(r.stdout.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if !mapsEqual(figureIDs(res), figureIDs(r.ref)) {
		t.Fatalf("figures differ:\n%v\n%v", figureIDs(r.ref), figureIDs(res))
	}
}

// rerun runs the coordinator again to the end and checks that the figures
// are the reference's, byte for byte.
func (r *slurmResumeRun) rerun(t *testing.T) string {
	t.Helper()
	res, stderr := runSlurm(t, r.bin, r.dir, "--dag", r.dag, "--store", r.store, "--figures", filepath.Join(r.dir, "fig"))
	if !mapsEqual(figureIDs(res), figureIDs(r.ref)) {
		t.Fatalf("figures differ:\n%v\n%v\nlog:\n%s", figureIDs(r.ref), figureIDs(res), stderr)
	}
	sameFigures(t, readFigures(t, filepath.Join(r.dir, "ref-fig")), readFigures(t, filepath.Join(r.dir, "fig")))
	return stderr
}

// scancel of a running job: the coordinator resubmits the task, which
// resumes from its checkpoint and ends with the bytes of a local run.
func TestSlurmScancelledJobResumes(t *testing.T) {
	r := startSlurmResumeRun(t)
	if out, err := exec.Command("scancel", r.jobs...).CombinedOutput(); err != nil {
		t.Fatalf("scancel %v: %v\n%s", r.jobs, err, out)
	}
	r.finish(t, fmt.Sprintf("after scancel of %v", r.jobs))
	if !strings.Contains(r.stderr.String(), "ended CANCELLED") && !strings.Contains(r.stderr.String(), "resubmitting") {
		t.Errorf("the log does not tell of the cancelled job:\n%s", r.stderr.String())
	}
	if !resumed(t, r.bin, r.store) {
		t.Errorf("no train task resumed from its checkpoint; log:\n%s", r.stderr.String())
	}
}

// A coordinator killed with SIGKILL leaves its jobs running; the next run
// adopts them: it waits for the attempts they hold instead of rerunning
// their tasks, records every task once and ends with the bytes of a local
// run.
func TestSlurmCoordinatorKilledThenRerun(t *testing.T) {
	r := startSlurmResumeRun(t)
	r.cmd.Process.Signal(syscall.SIGKILL)
	r.cmd.Wait()
	if len(jobsOf(t, "RUNNING")) == 0 {
		t.Fatal("the runners ended with the coordinator")
	}
	stderr := r.rerun(t)
	if !strings.Contains(stderr, "adopting ") || !strings.Contains(stderr, "adopted attempt 1, which a job of an earlier coordinator was running") {
		t.Errorf("the rerun adopted nothing:\n%s", stderr)
	}
	if resumed(t, r.bin, r.store) {
		t.Errorf("a train task resumed from a checkpoint instead of its attempt being adopted")
	}
	for task := range lastOutputs(t, r.store) {
		if n := doneEvents(t, r.store, task); n != 1 {
			t.Errorf("%s recorded done %d times", task, n)
		}
	}
	if len(jobsOf(t, "RUNNING,PENDING")) > 0 {
		t.Error("jobs of the store are still queued or running after the run")
	}
}

// A task that fails in its job fails the run with the task, its error and
// the path of its Slurm log; the other task finishes.
func TestSlurmFailingTaskNamesItsLog(t *testing.T) {
	slurmCluster(t)
	bin, dir := binary(t), t.TempDir()
	dagPath, _ := filepath.Abs("testdata/fail.yaml")
	cmd := exec.Command(bin, "run", "--json", "--executor", "slurm", "--dag", dagPath, "--store", filepath.Join(dir, "store"), "--figures", filepath.Join(dir, "fig"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitFailed {
		t.Fatalf("exit: %v, want %d\n%s", err, exitFailed, stderr.String())
	}
	var res runResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	msg := res.Errors["generate/mnist"]
	if !strings.Contains(msg, "/nonexistent/mnist") || !strings.Contains(msg, "(log "+filepath.Join(dir, "store", "slurm", "logs")) {
		t.Fatalf("error = %q, want the missing directory and the job's log", msg)
	}
	logPath := msg[strings.LastIndex(msg, "(log ")+5 : len(msg)-1]
	if b, err := os.ReadFile(logPath); err != nil || !strings.Contains(string(b), "/nonexistent/mnist") {
		t.Errorf("the job's log %s does not hold the error (%v):\n%s", logPath, err, b)
	}
	if len(res.Executed) != 1 || res.Executed[0] != "generate/linreg/d=10/seed=5488" {
		t.Errorf("executed %v", res.Executed)
	}
}

// Slurm unreachable (controller down), a partition that does not exist or
// missing commands: a clear error within seconds, before anything is
// submitted, and nothing recorded.
func TestSlurmUnavailableFailsFast(t *testing.T) {
	slurmCluster(t)
	bin, dir := binary(t), t.TempDir()
	dagPath, _ := filepath.Abs("testdata/fail.yaml")
	// A configuration naming a controller that is not there.
	conf, err := os.ReadFile(os.Getenv("SLURM_CONF"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(conf), "\n") {
		if strings.HasPrefix(l, "SlurmctldPort=") {
			l = "SlurmctldPort=1"
		}
		lines = append(lines, l)
	}
	down := filepath.Join(dir, "down.conf")
	os.WriteFile(down, []byte(strings.Join(lines, "\n")), 0o644)
	for _, c := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"controller down", []string{"SLURM_CONF=" + down}, nil, "the controller does not answer"},
		{"bad partition", nil, []string{"--slurm-partition", "nosuchpartition"}, `partition "nosuchpartition" does not exist`},
		{"no slurm commands", []string{"PATH=/nonexistent"}, nil, "sbatch is not on PATH"},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			cmd := exec.Command(bin, append([]string{"run", "--executor", "slurm", "--dag", dagPath, "--store", store}, c.args...)...)
			cmd.Env = append(os.Environ(), c.env...)
			t0 := time.Now()
			out, err := cmd.CombinedOutput()
			if took := time.Since(t0); took > 20*time.Second {
				t.Errorf("took %s to fail", took)
			}
			if err == nil || !strings.Contains(string(out), c.want) {
				t.Fatalf("err %v, output:\n%s\nwant %q", err, out, c.want)
			}
			if files, _ := filepath.Glob(filepath.Join(store, "attempts", "*")); len(files) > 0 {
				t.Errorf("attempts written: %v", files)
			}
		})
	}
}

// SIGINT on the coordinator cancels its jobs, records what they did and
// exits 130, leaving no job behind; the next run resumes and ends with the
// bytes of a local run.
func TestSlurmInterruptCancelsJobs(t *testing.T) {
	r := startSlurmResumeRun(t)
	t0 := time.Now()
	r.cmd.Process.Signal(os.Interrupt)
	err := r.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitInterrupted {
		t.Fatalf("exit: %v, want %d\n%s", err, exitInterrupted, r.stderr.String())
	}
	t.Logf("stopped %s after SIGINT", time.Since(t0))
	if jobs := jobsOf(t, "RUNNING,PENDING,COMPLETING"); len(jobs) > 0 {
		t.Errorf("jobs left after the coordinator stopped: %v", jobs)
	}
	r.rerun(t)
	if !resumed(t, r.bin, r.store) {
		t.Error("no train task resumed from its checkpoint")
	}
}

// An attempt file damaged while its job runs is rejected
// when the job ends (kept as *.rejected, nothing of it recorded) and the
// task reruns, ending with the bytes of a local run.
func TestSlurmCorruptAttemptFileIsRejected(t *testing.T) {
	r := startSlurmResumeRun(t)
	files, _ := filepath.Glob(filepath.Join(r.store, "attempts", "*", "*.attempt"))
	damaged := 0
	for _, f := range files {
		a, err := events.ReadAttempt(f)
		if err != nil || !strings.HasPrefix(a.Header.Task, "train/") {
			continue
		}
		fh, err := os.OpenFile(f, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		// A byte of the header frame's payload (after the 18-byte magic
		// line and the frame's length): its digest no longer matches,
		// with frames after it.
		b := make([]byte, 1)
		fh.ReadAt(b, 24)
		b[0] ^= 0x5a
		fh.WriteAt(b, 24)
		fh.Close()
		damaged++
	}
	if damaged == 0 {
		t.Fatal("no train attempt file to damage")
	}
	r.finish(t, "with a damaged attempt file")
	if !strings.Contains(r.stderr.String(), "rejected: events: corrupt attempt file") {
		t.Errorf("the log does not say the file was rejected:\n%s", r.stderr.String())
	}
	if kept, _ := filepath.Glob(filepath.Join(r.store, "attempts", "*", "*.attempt.rejected")); len(kept) != damaged {
		t.Errorf("%d rejected files kept, want %d", len(kept), damaged)
	}
}
