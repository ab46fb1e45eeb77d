package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBadFlags(t *testing.T) {
	dir := t.TempDir()
	good, _ := filepath.Abs("../../dag.yaml")
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no command", nil, nil, "usage: pipeline <command>"},
		{"unknown command", []string{"runn"}, nil, `unknown command "runn"`},
		{"unknown flag", []string{"run", "--jbos", "2"}, nil, "unknown flag: --jbos"},
		{"zero jobs", []string{"run", "--jobs", "0"}, nil, "--jobs (or PIPELINE_JOBS): must be >= 1, got 0"},
		{"negative jobs", []string{"run", "--jobs", "-3"}, nil, "must be >= 1, got -3"},
		{"jobs not a number", []string{"run", "--jobs", "many"}, nil, `invalid argument "many" for "--jobs"`},
		{"jobs from env not a number", []string{"run"}, map[string]string{"PIPELINE_JOBS": "lots"}, `--jobs (or PIPELINE_JOBS): "lots" is not an integer`},
		{"bad checkpoint interval", []string{"run", "--checkpoint-interval", "soon"}, nil, `invalid argument "soon"`},
		{"negative checkpoint interval", []string{"run", "--checkpoint-interval", "-1s"}, nil, "--checkpoint-interval: must not be negative"},
		{"empty store", []string{"run", "--store", ""}, nil, "--store (or PIPELINE_STORE): must not be empty"},
		{"bad force from env", []string{"run"}, map[string]string{"PIPELINE_FORCE": "maybe"}, `--force (or PIPELINE_FORCE): "maybe" is not true or false`},
		{"why without task", []string{"why"}, nil, "pipeline why: takes exactly one TASK argument, got 0"},
		{"events with two tasks", []string{"events", "a", "b"}, nil, "pipeline events: takes exactly one TASK argument, got 2"},
		{"show with three arguments", []string{"show", "a", "b", "c"}, nil, "pipeline show: takes a TASK and optionally one FILE of its output, got 3 arguments"},
		{"run an unknown target", []string{"run", "--dag", good, "--store", filepath.Join(dir, "s"), "plot/nope"}, nil, `no stage or task matches ["plot/nope"]`},
		{"status with argument", []string{"status", "extra"}, nil, `pipeline status: unexpected arguments ["extra"]`},
		{"unknown profile", []string{"dag", "--dag", good, "--profile", "fast"}, nil, `unknown profile "fast" (known: crossover, horizon-long, horizon-variants, paper, published, quick, smoke)`},
		{"unknown profile from env", []string{"dag", "--dag", good}, map[string]string{"PIPELINE_PROFILE": "nope"}, `unknown profile "nope"`},
		{"missing dag file", []string{"run", "--dag", filepath.Join(dir, "missing.yaml"), "--store", filepath.Join(dir, "s")}, nil, "missing.yaml: cannot read"},
		{"audit without figure", []string{"audit"}, nil, "pipeline audit: takes exactly one FIGURE argument"},
		{"verify without all or sample", []string{"verify"}, nil, "pipeline verify: give TARGETs, --all, --sample N or --against DIR"},
		{"verify with both", []string{"verify", "--all", "--sample", "3"}, nil, "give --all or --sample N, not both"},
		{"verify negative sample", []string{"verify", "--sample", "-2"}, nil, "--sample (or PIPELINE_SAMPLE): must be >= 1, got -2"},
		{"replay negative until", []string{"replay", "train/x", "--until", "-1"}, nil, "--until (or PIPELINE_UNTIL): must be >= 0, got -1"},
		{"replay flag on run", []string{"run", "--until", "3"}, nil, "unknown flag: --until"},
		{"gc with argument", []string{"gc", "all"}, nil, `pipeline gc: unexpected arguments ["all"]`},
		{"unknown executor", []string{"run", "--executor", "cluster"}, nil, `--executor (or PIPELINE_EXECUTOR): "cluster" is neither local nor slurm`},
		{"zero slurm cpus", []string{"run", "--slurm-cpus", "0"}, nil, "--slurm-cpus (or PIPELINE_SLURM_CPUS): must be >= 1, got 0"},
		{"slurm max jobs from env", []string{"run"}, map[string]string{"PIPELINE_SLURM_MAX_JOBS": "many"}, `--slurm-max-jobs (or PIPELINE_SLURM_MAX_JOBS): "many" is not an integer`},
		{"unknown setting in the configuration", []string{"status"}, map[string]string{"PIPELINE_CONFIG": writeFile(t, dir, "c1.yaml", "executor: slurm\nslurm:\n  partition: gpu\n")}, `c1.yaml: unknown setting "slurm.partition"`},
		{"bad executor in the configuration", []string{"run"}, map[string]string{"PIPELINE_CONFIG": writeFile(t, dir, "c2.yaml", "executor: k8s\n")}, `"k8s" is neither local nor slurm`},
		{"malformed configuration", []string{"run"}, map[string]string{"PIPELINE_CONFIG": writeFile(t, dir, "c3.yaml", "executor: [\n")}, "configuration " + filepath.Join(dir, "c3.yaml")},
		{"missing configuration", []string{"run"}, map[string]string{"PIPELINE_CONFIG": filepath.Join(dir, "none.yaml")}, "none.yaml"},
		{"why unknown task", []string{"why", "train/nope", "--dag", good, "--store", filepath.Join(dir, "none")}, nil, "no event log at"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), c.args, &stdout, &stderr)
			if code != exitInvalid {
				t.Errorf("exit code %d, want %d", code, exitInvalid)
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("stderr lacks %q:\n%s", c.want, stderr.String())
			}
		})
	}
	// Validation failures touch no store.
	if _, err := os.Stat(filepath.Join(dir, "s")); !os.IsNotExist(err) {
		t.Errorf("a failed validation created the store: %v", err)
	}
}

// TestHelpAndVersion: help goes to stdout with exit 0; a command's help
// lists its synopsis and only its own flags; --version names the code
// identity and the build tags.
func TestHelpAndVersion(t *testing.T) {
	for _, c := range []struct {
		args       []string
		want, lack []string
	}{
		{[]string{"help"}, []string{"usage: pipeline <command>", "verify ", "pipeline help <command>"}, nil},
		{[]string{"--help"}, []string{"usage: pipeline <command>"}, nil},
		{[]string{"-h"}, []string{"usage: pipeline <command>"}, nil},
		{[]string{"help", "run"}, []string{"usage: pipeline run [TARGET...] [flags]", "--force", "--snapshot-interval"}, []string{"--until", "--curve"}},
		{[]string{"run", "--help"}, []string{"usage: pipeline run [TARGET...] [flags]"}, nil},
		{[]string{"status", "-h"}, []string{"usage: pipeline status [flags]", "--times", "--profile"}, []string{"--force", "--jobs", "--figures"}},
		{[]string{"help", "events"}, []string{"usage: pipeline events TASK [flags]", "--jsonl"}, []string{"--dag", "--profile", "--jobs"}},
		{[]string{"help", "gc"}, []string{"--dry-run", "--checkpoints"}, []string{"--dag", "--profile", "--figures"}},
		{[]string{"help", "verify"}, []string{"--all", "--sample", "--scratch"}, []string{"--force", "--until"}},
		{[]string{"--version"}, []string{"pipeline ", "code identity"}, nil},
		// help of help is the command list (issue 27: it exited 2), and
		// --json is honoured by --version (it was ignored).
		{[]string{"help", "help"}, []string{"usage: pipeline <command>", "pipeline help <command>"}, nil},
		{[]string{"--version", "--json"}, []string{`{"revision":`, `"tags":[`, `"go":"go`}, nil},
	} {
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), c.args, &stdout, &stderr); code != exitOK {
			t.Errorf("%v: exit %d, want 0 (stderr %q)", c.args, code, stderr.String())
		}
		if stderr.Len() != 0 {
			t.Errorf("%v: wrote to stderr: %q", c.args, stderr.String())
		}
		for _, w := range c.want {
			if !strings.Contains(stdout.String(), w) {
				t.Errorf("%v: stdout lacks %q:\n%s", c.args, w, stdout.String())
			}
		}
		for _, l := range c.lack {
			if strings.Contains(stdout.String(), l) {
				t.Errorf("%v: stdout lists %q, a flag the command does not take:\n%s", c.args, l, stdout.String())
			}
		}
	}
	var stdout, stderr bytes.Buffer
	if code := Main(context.Background(), []string{"help", "runn"}, &stdout, &stderr); code != exitInvalid || !strings.Contains(stderr.String(), `unknown command "runn"`) {
		t.Errorf("help of an unknown command: exit %d, %q", code, stderr.String())
	}
	// Arguments --version cannot take, and a non-finite --x, are usage
	// errors (issue 27: --x NaN was accepted and audited the first point).
	for _, args := range [][]string{{"--version", "--jsno"}, {"audit", "fig.png", "--x", "NaN"}, {"audit", "fig.png", "--x", "-Inf"}} {
		stderr.Reset()
		if code := Main(context.Background(), args, &stdout, &stderr); code != exitInvalid {
			t.Errorf("%v: exit %d, want 2 (%q)", args, code, stderr.String())
		}
	}
	if !strings.Contains(stderr.String(), `--x "-Inf" is not a finite number`) {
		t.Errorf("audit --x -Inf: %q", stderr.String())
	}
	// --scratch must be outside the store (issue 27: a scratch inside it
	// wrote directories into the real store, then blamed "another pipeline
	// process").
	for _, args := range [][]string{
		{"replay", "train/a", "--store", "st", "--scratch", "st/tmp"},
		{"verify", "--all", "--store", "st", "--scratch", "./st"},
		{"verify", "--all", "--store", "st/inner", "--scratch", "st"},
	} {
		stderr.Reset()
		if code := Main(context.Background(), args, &stdout, &stderr); code != exitInvalid || !strings.Contains(stderr.String(), "--scratch") || !strings.Contains(stderr.String(), "give a directory outside it") {
			t.Errorf("%v: exit %d, %q", args, code, stderr.String())
		}
	}
	// A flag of another command is refused, and the message points at help.
	stderr.Reset()
	if code := Main(context.Background(), []string{"status", "--force"}, &stdout, &stderr); code != exitInvalid || !strings.Contains(stderr.String(), "pipeline help status") {
		t.Errorf("status --force: exit %d, %q", code, stderr.String())
	}
}

// withFlags returns args followed by the "--flag value" pairs of common
// that the command args[0] takes: test harnesses keep one list of dag,
// store and figure flags for every command, and each command refuses
// flags it does not take.
func withFlags(args []string, common ...string) []string {
	cmd, ok := lookup(args[0])
	if !ok {
		panic("withFlags: unknown command " + args[0])
	}
	fs := flagsOf(cmd, io.Discard)
	out := slices.Clone(args)
	for i := 0; i+1 < len(common); i += 2 {
		if fs.Lookup(strings.TrimPrefix(common[i], "--")) != nil {
			out = append(out, common[i], common[i+1])
		}
	}
	return out
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The configuration file sets what flags and PIPELINE_* do not; flags win
// over the environment, which wins over the file.
func TestConfigurationFile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PIPELINE_CONFIG", writeFile(t, dir, "pipeline.yaml", "executor: slurm\nslurm-partition: long\nslurm-args: --qos=x --exclusive\njobs: 7\nslurm-cpus: 4\n"))
	cmd, err := parse([]string{"run"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c := cmd.(*runCmd)
	if c.executor != "slurm" || c.slurm.partition != "long" || !slices.Equal(strings.Fields(c.slurm.args), []string{"--qos=x", "--exclusive"}) || c.jobs != 7 || c.slurm.cpus != 4 || c.slurm.maxJobs != 100 {
		t.Errorf("from the file: %+v", c)
	}
	t.Setenv("PIPELINE_SLURM_PARTITION", "env")
	if cmd, err = parse([]string{"run", "--jobs", "2"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	c = cmd.(*runCmd)
	if c.slurm.partition != "env" || c.jobs != 2 || c.executor != "slurm" {
		t.Errorf("precedence: partition %q (want env), jobs %d (want 2), executor %q", c.slurm.partition, c.jobs, c.executor)
	}
}

// The plan says which grid points a tuner leaves out and why, in `dag`
// and in a dry run (issue 27: infeasible and invalid points alike were
// dropped without a word).
func TestPlanListsSkippedGridPoints(t *testing.T) {
	t.Parallel() // no clock in its checks; see tests.md
	root := repoRoot(t)
	dagPath := filepath.Join(root, "dag.yaml")
	want := "skips 25 infeasible grid point(s), first alpha=0.001 directions=10 nu=0.001 top=50: top: must be <= directions = 10, got 50"
	var stdout, stderr bytes.Buffer
	if code := Main(context.Background(), []string{"dag", "--dag", dagPath, "--profile", "paper", "--store", t.TempDir()}, &stdout, &stderr); code != exitOK {
		t.Fatalf("dag: exit %d\n%s", code, stderr.String())
	}
	i := strings.Index(stdout.String(), "\n  tune/linreg/d=100/method=ars\n")
	if i < 0 || !strings.Contains(stdout.String()[i:], "      "+want+"\n") {
		t.Fatalf("dag lacks %q under tune/linreg/d=100/method=ars", want)
	}
	out, code := cliStdout(t, binary(t), root, "run", "--dry-run", "--dag", dagPath, "--profile", "paper", "--store", filepath.Join(t.TempDir(), "store"))
	if code != exitOK || !strings.Contains(out, "note   tune/linreg/d=100/method=ars  ("+want+")\n") {
		t.Fatalf("the dry run (exit %d) lacks the skipped points of tune/linreg/d=100/method=ars:\n%.3000s", code, out)
	}
}
