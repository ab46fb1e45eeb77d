package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The defects a new user hit moving results with export, import and
// publish (issue 41; each check fails on the code before its fix).
func TestTransportDefects(t *testing.T) {
	bin, root, dir, common := smokeStore(t)
	dagFlag := []string{"--dag", filepath.Join(root, "dag.yaml")}
	file := filepath.Join(dir, "smoke.bundle")
	if out, code := cli(t, bin, root, withFlags([]string{"export", "report", "--to", file}, common...)...); code != 0 {
		t.Fatalf("export: exit %d\n%s", code, out)
	}

	// 1. An import records the bundle's profile, so that the commands
	// that default to the latest run's profile use it: status, and
	// verify --against a smoke publication, without --profile.
	other := append(slicesClone(dagFlag), "--store", filepath.Join(dir, "other"))
	if out, code := cli(t, bin, root, withFlags([]string{"import", file}, other...)...); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, out)
	}
	js, _ := cliStdout(t, bin, root, withFlags([]string{"status", "--json"}, other...)...)
	var st struct{ Profile string }
	if err := json.Unmarshal([]byte(js), &st); err != nil || st.Profile != "smoke" {
		t.Errorf("status after importing a smoke bundle: profile %q (%v), want smoke", st.Profile, err)
	}
	pub := filepath.Join(dir, "pub")
	if out, code := cli(t, bin, root, withFlags([]string{"publish", "--to", pub}, common...)...); code != 0 {
		t.Fatalf("publish: exit %d\n%s", code, out)
	}
	if out, code := cli(t, bin, root, withFlags([]string{"verify", "--against", pub}, other...)...); code != 0 {
		t.Errorf("verify --against a smoke publication, on the imported store without --profile: exit %d\n%s", code, out)
	}

	// 2. publish --to a directory holding another profile's publication
	// is refused and leaves it as it was.
	paper := filepath.Join(dir, "paper")
	os.Mkdir(paper, 0o755)
	os.WriteFile(filepath.Join(paper, "manifest.json"), readFile(t, filepath.Join(root, "results", "paper", "manifest.json")), 0o644)
	os.WriteFile(filepath.Join(paper, "fig2-linreg.svg"), []byte("the paper's figure"), 0o644)
	before := storeFiles(t, paper)
	out, code := cli(t, bin, root, withFlags([]string{"publish", "--to", paper}, common...)...)
	if code != 2 || !strings.Contains(out, "published result of profile paper") {
		t.Errorf("publish smoke over a paper publication: exit %d, want 2 naming profile paper\n%s", code, out)
	}
	sameFiles(t, "the paper publication", before, storeFiles(t, paper))

	// 9. A single-file export over a volume set removes its volumes.
	vfile := filepath.Join(dir, "v.bundle")
	cli(t, bin, root, withFlags([]string{"export", "plot/fig3c-lqr", "--to", vfile, "--volume-size", "1MiB"}, common...)...)
	if vols, _ := filepath.Glob(vfile + ".*"); len(vols) < 1 {
		t.Fatalf("export in volumes wrote %v", vols)
	}
	cli(t, bin, root, withFlags([]string{"export", "plot/fig3c-lqr", "--to", vfile}, common...)...)
	if vols, _ := filepath.Glob(vfile + ".*"); len(vols) != 0 {
		t.Errorf("an export in one file over a volume set left %v", vols)
	}

	// 9. --json prints a JSON error when a command fails, for a failure
	// of the command and for a bad command line.
	for _, args := range [][]string{
		withFlags([]string{"status", "--json"}, append(slicesClone(dagFlag), "--store", filepath.Join(dir, "nowhere"))...),
		{"status", "--json", "--no-such-flag"},
		withFlags([]string{"export", "report", "--json", "--to", filepath.Join(dir, "no", "dir", "x.bundle")}, common...),
	} {
		js, code := cliStdout(t, bin, root, args...)
		var e struct {
			Error    string
			ExitCode int `json:"exit_code"`
		}
		if err := json.Unmarshal([]byte(js), &e); err != nil || e.Error == "" || e.ExitCode != code || code == 0 {
			t.Errorf("%v: exit %d, stdout %q (%v), want a JSON error with the exit code", args, code, js, err)
		}
	}

	// 9. A dry run against a store that does not exist creates nothing.
	fresh := filepath.Join(dir, "fresh")
	if out, code := cli(t, bin, root, "run", "--dry-run", "--profile", "smoke", "--dag", filepath.Join(root, "dag.yaml"), "--store", fresh); code != 0 || !strings.Contains(out, "257 of 257 tasks would run") {
		t.Errorf("dry run on a new store: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Errorf("a dry run created %s", fresh)
	}

	// 9. A store the file system refuses (sysfs refuses mkdir, even to
	// root) is not bad input: exit 1.
	for _, args := range [][]string{
		{"run", "--profile", "smoke", "--store", "/sys/pipeline-test/store"},
		{"import", file, "--store", "/sys/pipeline-test/store"},
	} {
		if out, code := cli(t, bin, root, withFlags(args, dagFlag...)...); code != 1 {
			t.Errorf("%v: exit %d, want 1\n%s", args, code, out)
		}
	}
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// sameFiles fails unless two storeFiles snapshots are equal.
func sameFiles(t *testing.T, what string, before, after map[string][32]byte) {
	t.Helper()
	if len(before) != len(after) {
		t.Errorf("%s: %d files before, %d after", what, len(before), len(after))
	}
	for p, h := range before {
		if after[p] != h {
			t.Errorf("%s: %s changed", what, p)
		}
	}
}

// stoppedAt starts the binary with PIPELINE_CRASHPOINT=SITE:N:stop
// (site:n) and waits until it has stopped itself there.
func stoppedAt(t *testing.T, bin, dir string, at string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PIPELINE_CRASHPOINT="+at+":stop")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	stat := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "stat")
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile(stat)
		if i := bytes.LastIndexByte(b, ')'); err == nil && i > 0 && i+2 < len(b) && b[i+2] == 'T' {
			return cmd
		}
	}
	t.Fatalf("%v did not reach crash point %s", args, at)
	return nil
}

// interrupt sends sig to a stopped command, lets it continue, and returns
// its exit code and how long it took to exit.
func interrupt(t *testing.T, cmd *exec.Cmd, sig syscall.Signal) (int, time.Duration) {
	t.Helper()
	sent := time.Now()
	cmd.Process.Signal(sig)
	cmd.Process.Signal(syscall.SIGCONT)
	cmd.Wait()
	return cmd.ProcessState.ExitCode(), time.Since(sent)
}

// SIGINT or SIGTERM in the middle of an export or an import stops it
// (exit 130), leaving no partial bundle or temporary file and recording
// nothing; the same command then completes, giving what an uninterrupted
// one gives. An export killed outright leaves its temporary file, which
// the next export removes (issue 41, defect 3).
func TestBundleInterrupts(t *testing.T) {
	bin, root, dir, common := smokeStore(t)
	target := "plot/fig3c-lqr"
	ref := filepath.Join(dir, "ref.bundle")
	if out, code := cli(t, bin, root, withFlags([]string{"export", target, "--to", ref}, common...)...); code != 0 {
		t.Fatalf("export: exit %d\n%s", code, out)
	}
	out := filepath.Join(dir, "out", "b.bundle")
	os.Mkdir(filepath.Dir(out), 0o755)
	leftovers := func() []string {
		var names []string
		ents, _ := os.ReadDir(filepath.Dir(out))
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return names
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd := stoppedAt(t, bin, root, "bundle.member:20", withFlags([]string{"export", target, "--to", out}, common...)...)
		code, took := interrupt(t, cmd, sig)
		t.Logf("export stopped %v after %v", took.Round(time.Millisecond), sig)
		if code != exitInterrupted {
			t.Errorf("export after %v: exit %d, want 130", sig, code)
		}
		if l := leftovers(); len(l) != 0 {
			t.Errorf("an interrupted export left %v", l)
		}
	}
	killed := exec.Command(bin, withFlags([]string{"export", target, "--to", out}, common...)...)
	killed.Dir, killed.Env = root, append(os.Environ(), "PIPELINE_CRASHPOINT=bundle.member:20")
	killed.Run()
	if l := leftovers(); len(l) != 1 || !strings.Contains(l[0], ".tmp-b.bundle") {
		t.Fatalf("an export killed outright left %v, want its temporary file", l)
	}
	if o, code := cli(t, bin, root, withFlags([]string{"export", target, "--to", out}, common...)...); code != 0 {
		t.Fatalf("export after the interruptions: exit %d\n%s", code, o)
	}
	if l := leftovers(); len(l) != 1 || !bytes.Equal(readFile(t, out), readFile(t, ref)) {
		t.Errorf("the export after the interruptions: files %v, equal to an uninterrupted one: %v", l, bytes.Equal(readFile(t, out), readFile(t, ref)))
	}

	// Import: stopped in its second pass (after the first pass's members:
	// the bundle's hits are counted on the reference import below).
	flags := func(name string) []string {
		return []string{"--dag", filepath.Join(root, "dag.yaml"), "--store", filepath.Join(dir, name)}
	}
	counts := filepath.Join(dir, "counts.json")
	whole := exec.Command(bin, withFlags([]string{"import", ref}, flags("whole")...)...)
	whole.Dir, whole.Env = root, append(os.Environ(), "PIPELINE_CRASHPOINT_COUNTS="+counts)
	if o, err := whole.CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, o)
	}
	var hits map[string]int
	if err := json.Unmarshal(readFile(t, counts), &hits); err != nil || hits["bundle.member"] < 20 {
		t.Fatalf("crash point counts of an import: %v (%v)", hits, err)
	}
	members := hits["bundle.member"] / 2 // each pass reads every member
	cmd := stoppedAt(t, bin, root, "bundle.member:"+strconv.Itoa(members+members/2), withFlags([]string{"import", ref}, flags("cut")...)...)
	code, took := interrupt(t, cmd, syscall.SIGINT)
	t.Logf("import stopped %v after SIGINT", took.Round(time.Millisecond))
	if code != exitInterrupted {
		t.Errorf("import after SIGINT: exit %d, want 130", code)
	}
	if o, _ := cli(t, bin, root, withFlags([]string{"status", "--profile", "smoke"}, flags("cut")...)...); strings.Contains(o, "done ") {
		t.Errorf("an interrupted import recorded tasks:\n%s", o)
	}
	if o, code := cli(t, bin, root, withFlags([]string{"import", ref}, flags("cut")...)...); code != 0 {
		t.Fatalf("import after the interruption: exit %d\n%s", code, o)
	}
	wholeCAS, cutCAS := casFiles(t, filepath.Join(dir, "whole")), casFiles(t, filepath.Join(dir, "cut"))
	sameFiles(t, "the store of an interrupted, then completed import against an uninterrupted one's", wholeCAS, cutCAS)
	res, _ := pipelineRun(t, bin, root, append([]string{target, "--profile", "smoke"}, flags("cut")...)...)
	if len(res.Executed) != 0 {
		t.Errorf("a run after the completed import executed %v", res.Executed)
	}
}

// casFiles is storeFiles of a store's content entries, by their path
// below the store.
func casFiles(t *testing.T, storeDir string) map[string][32]byte {
	out := map[string][32]byte{}
	for p, h := range storeFiles(t, filepath.Join(storeDir, "cas")) {
		rel, _ := filepath.Rel(storeDir, p)
		out[rel] = h
	}
	return out
}
