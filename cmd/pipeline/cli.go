package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"zorepro/pipeline"
	"zorepro/pipeline/codeid"
)

// A command of the CLI: its synopsis, the flags it takes (names in
// flagDefs) and what it runs.
type command struct {
	name    string
	args    string // the arguments' synopsis, e.g. "TASK [FILE]"
	summary string // one line, for the command list
	detail  string // what `help CMD` adds
	flags   []string
	// check reports problems with the arguments (flags are checked by
	// parseConfig).
	check func(c *Config) []string
	run   func(ctx context.Context, c *Config, stdout, stderr io.Writer) (int, error)
}

// inspect are the flags of the commands that read a store against a plan.
var inspect = []string{"dag", "profile", "store", "json"}

var commands = []command{
	{name: "run", args: "[TARGET...]", summary: "execute the DAG, or only the named stages/tasks and what they need (only what changed)",
		detail: "TARGETs are stage names, task paths or /-bounded prefixes of them. Identities do not depend\non the targets, so a later full run finds their work cached.",
		flags: []string{"dag", "profile", "jobs", "store", "figures", "json", "force", "dry-run", "checkpoint-interval", "snapshot-interval",
			"executor", "slurm-partition", "slurm-account", "slurm-time", "slurm-cpus", "slurm-mem", "slurm-max-jobs", "slurm-args", "slurm-log-dir",
			"slurm-idle", "slurm-outage", "slurm-stall"},
		run: cmdRun},
	{name: "status", summary: "the last recorded state of every task (--times: task time per stage)",
		flags: append(slices.Clone(inspect), "times"), check: noArgs, run: run1(reading(cmdStatus))},
	{name: "dag", summary: "the expanded task graph with each task's inputs",
		flags: inspect, check: noArgs, run: run1(cmdDAG)},
	{name: "why", args: "TASK", summary: "what changed in a task's identity since its last run",
		flags: inspect, check: oneTask, run: run1(reading(cmdWhy))},
	{name: "events", args: "TASK", summary: "a task's recorded events, iteration by iteration",
		detail: "--json prints one object; --jsonl streams one JSON object per event, then a summary object.",
		flags:  []string{"store", "json", "jsonl"}, check: oneTask, run: run1(cmdEvents)},
	{name: "show", args: "TASK [FILE]", summary: "the files of a task's recorded output, or one file's bytes",
		flags: inspect, check: showArgs, run: run1(reading(cmdShow))},
	{name: "audit", args: "FIGURE", summary: "recompute every point of a figure from its events; --x: the chain behind one point",
		detail: "FIGURE is a file under --figures (any of its PNG, SVG or CSV) or an artifact ID.",
		flags:  append(slices.Clone(inspect), "figures", "curve", "panel", "x"), check: auditArgs, run: run1(reading(cmdAudit))},
	{name: "replay", args: "TASK", summary: "re-execute a task's latest recorded output and compare its events bit for bit",
		flags: append(slices.Clone(inspect), "jobs", "until", "events", "scratch", "keep"), check: replayArgs, run: cmdReplay},
	{name: "verify", args: "[TARGET...]", summary: "re-execute recorded tasks and compare their outputs with the recorded ones",
		detail: "TARGETs (as for run) select their tasks and everything upstream; --all every task the store records\n" +
			"for the profile; --sample N a seeded pick of those. A task whose output or input is corrupt or missing,\n" +
			"or whose identity changed, is listed as not checkable with the reason; any such task, like a mismatch,\n" +
			"exits 1. --json prints one object; --jsonl streams one JSON object per task, then a summary object.",
		flags: append(slices.Clone(inspect), "jobs", "jsonl", "all", "sample", "seed", "scratch", "keep", "against"), check: verifyArgs, run: cmdVerify},
	{name: "report", summary: "(re)build the reproduction report (report.html, report.md, claims.json) from the recorded figures",
		detail: "Runs the report task alone: every figure it needs must be recorded for the profile (nothing upstream runs).\n" +
			"Prints each claim's verdict; --json prints claims.json (every claim's statistic, 95% interval and verdict).\n" +
			"--interim: the verdicts of the claims whose figures can be made from what the store records now (a run may\n" +
			"still be writing it); figures whose inputs are all recorded are plotted into a temporary directory, the other\n" +
			"claims are listed as pending; nothing is written to the store or --figures.",
		flags: []string{"dag", "profile", "store", "figures", "json", "interim"}, check: noArgs, run: cmdReport},
	{name: "worker", args: "SPEC | --runner DIR", summary: "run one task attempt from its spec file, or serve a run's queue as a runner (what Slurm jobs run)",
		detail: "The coordinator (run --executor slurm) writes the spec beside the attempt's event file; the worker runs\n" +
			"the task against the store the spec names and records its events in that file, never in the event log.\n" +
			"With --runner (a job the coordinator submitted) it takes attempts from the build directory's queue, one\n" +
			"after another, until none comes for --idle.",
		flags: []string{"jobs", "dag", "runner", "idle"}, check: workerArgs, run: cmdWorker},
	{name: "export", args: "TARGET...", summary: "write the recorded results of targets and everything upstream to one checksummed file (--to)",
		detail: "The bundle holds every output and the events that audit, replay and verify need, tuning trials included.\n" +
			"Every task of the closure must be recorded (run it first). --json prints what was written.",
		flags: []string{"dag", "profile", "store", "json", "to", "volume-size"}, check: exportArgs, run: run1(reading(cmdExport))},
	{name: "import", args: "FILE", summary: "merge a bundle into the store (every byte checked first); refuse one that contradicts the store",
		detail: "Each task is imported when this binary and dag.yaml give it the bundle's action; the others are counted.\n" +
			"A task whose action the store records with another output is a reproducibility failure: nothing is imported.",
		flags: []string{"dag", "profile", "store", "json"}, check: oneFile, run: run1(cmdImport)},
	{name: "publish", summary: "write a whole recorded profile's figures, tables and report with manifest.json to --to (a published result)",
		detail: "Every task of the profile must be recorded with this binary and dag.yaml. manifest.json names every file's content ID,\n" +
			"the revision and code identity, the task time per stage, the runs' wall time and the machine; verify --against\n" +
			"compares another store with it.",
		flags: []string{"dag", "profile", "store", "json", "to"}, check: publishArgs, run: run1(reading(cmdPublish))},
	{name: "gc", summary: "remove store entries that no recorded run references",
		flags: []string{"store", "json", "dry-run", "checkpoints"}, check: noArgs, run: run1(cmdGC)},
}

// run1 adapts a command that needs neither the context nor stderr.
func run1(f func(c *Config, stdout io.Writer) (int, error)) func(context.Context, *Config, io.Writer, io.Writer) (int, error) {
	return func(_ context.Context, c *Config, stdout, _ io.Writer) (int, error) { return f(c, stdout) }
}

// reading adapts a command that reads the store against the plan: it
// opens both read-only for f and closes them after.
func reading(f func(c *Config, eng *pipeline.Engine, stdout io.Writer) (int, error)) func(*Config, io.Writer) (int, error) {
	return func(c *Config, stdout io.Writer) (int, error) {
		eng, closeLog, err := openEngine(c, true)
		if err != nil {
			return exitInvalidOr(err), err
		}
		defer closeLog()
		return f(c, eng, stdout)
	}
}

func lookup(name string) (*command, bool) {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i], true
		}
	}
	return nil, false
}

// flagDef is one flag: its default (a string, int, bool or time.Duration,
// which sets the flag's type) and its help.
type flagDef struct {
	def   any
	usage string
}

var flagDefs = map[string]flagDef{
	"dag":                 {"dag.yaml", "the DAG file"},
	"profile":             {"", "a profile of dag.yaml (paper, quick, smoke, published, crossover, horizon-long); run defaults to paper, the other commands to the profile of the store's latest run"},
	"jobs":                {runtime.NumCPU(), "number of workers"},
	"store":               {"artifacts", "store root (content store and events.db)"},
	"figures":             {"figures", "directory figures are exported to"},
	"json":                {false, "print one JSON document"},
	"jsonl":               {false, "stream JSON Lines: one object per item, then a summary object"},
	"force":               {false, "rerun every task, ignoring the cache"},
	"dry-run":             {false, "report what would be done, do nothing"},
	"checkpoint-interval": {10 * time.Second, "minimum time between checkpoints of a task"},
	"snapshot-interval":   {30 * time.Second, "how often to refresh the event log snapshot that other commands read during the run (0: never)"},
	"times":               {false, "print the recorded task time per stage instead of the task list"},
	"interim":             {false, "the claims of the figures the store's records already make, computed now and written nowhere"},
	"curve":               {"", "audit only this curve (its key, e.g. ars)"},
	"panel":               {"", "audit only this panel (its key, e.g. 1000)"},
	"x":                   {"", "audit the plotted point nearest this x, with the chain behind it"},
	"until":               {"0", "stop after this iteration and compare up to it (0: the whole task)"},
	"events":              {false, "print every compared event pair"},
	"all":                 {false, "verify every recorded task"},
	"sample":              {"0", "verify this many recorded tasks, picked with --seed"},
	"seed":                {"1", "seed of the --sample pick"},
	"scratch":             {"", "directory to re-execute into (default: a temporary directory, removed afterwards)"},
	"keep":                {false, "keep the scratch directory"},
	"to":                  {"", "where to write: the bundle file (export), the directory (publish)"},
	"volume-size":         {"", "cut the bundle into volumes FILE.001, FILE.002, … of at most this size (e.g. 1900MiB: a GitHub release asset must be under 2 GiB) and write their index to FILE; import takes FILE"},
	"against":             {"", "compare the store's figures with a published result's manifest (e.g. results/paper) instead of re-executing"},
	"checkpoints":         {false, "also remove the checkpoints of tasks that finished"},
	"executor":            {"local", "where tasks run: local (this machine, --jobs workers) or slurm (one Slurm job per task attempt)"},
	"slurm-partition":     {"", "Slurm partition of the jobs (default: the cluster's default partition)"},
	"slurm-account":       {"", "Slurm account the jobs are charged to"},
	"slurm-time":          {"", "time limit of one job, as sbatch --time takes it (e.g. 2:00:00; a job past it resumes from its checkpoint)"},
	"slurm-cpus":          {"1", "CPUs per job (the worker's threads)"},
	"slurm-mem":           {"", "memory per job, as sbatch --mem takes it (e.g. 4G)"},
	"slurm-max-jobs":      {"100", "the most jobs in flight"},
	"slurm-args":          {"", "more sbatch arguments, separated by spaces (e.g. \"--qos=long --constraint=avx2\")"},
	"slurm-log-dir":       {"", "directory of the jobs' logs (default: STORE/slurm/logs; on the shared file system)"},
	"slurm-idle":          {20 * time.Second, "a runner job exits after this long without an attempt to run"},
	"slurm-outage":        {10 * time.Minute, "how long the controller may not answer before attempts without a sign of life fail (and sbatch stops being retried)"},
	"slurm-stall":         {2 * time.Hour, "stop the run if nothing progresses for this long (no job starts, no attempt is taken, ends or writes)"},
	"runner":              {"", "serve this build directory's queue (a runner job)"},
	"idle":                {20 * time.Second, "a runner exits after this long without an attempt"},
}

// flagSet returns the flags of cmd, help text included.
func flagSet(cmd *command, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(cmd.name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	for _, name := range cmd.flags {
		d := flagDefs[name]
		usage := d.usage
		if name == "profile" && cmd.name == "run" {
			usage = "a profile of dag.yaml (paper, quick, smoke, published, crossover, horizon-long)"
		}
		switch def := d.def.(type) {
		case string:
			fs.String(name, def, usage)
		case int:
			fs.Int(name, def, usage)
		case bool:
			fs.Bool(name, def, usage)
		case time.Duration:
			fs.Duration(name, def, usage)
		}
	}
	return fs
}

const overview = `pipeline reproduces the experiments of "Contrasting Exploration in Parameter and
Action Space" (Vemula, Sun & Bagnell, AISTATS 2019) from dag.yaml, bit for bit.

usage: pipeline <command> [arguments] [flags]
       pipeline help <command>
       pipeline --version

Every flag can also be set as PIPELINE_<FLAG> (e.g. PIPELINE_JOBS=4); flags win.
Exit codes: 0 success, 1 a task or a check failed, 2 invalid input, 130 interrupted.

commands:`

// usage is the overview with the command list.
func usage() string {
	var b strings.Builder
	b.WriteString(overview)
	for _, c := range commands {
		fmt.Fprintf(&b, "\n  %-7s %s", c.name, c.summary)
	}
	b.WriteString("\n\nrun 'pipeline help <command>' for a command's arguments and flags")
	return b.String()
}

// help is the help of one command: synopsis, what it does, its flags.
func help(cmd *command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: pipeline %s", cmd.name)
	if cmd.args != "" {
		b.WriteString(" " + cmd.args)
	}
	fmt.Fprintf(&b, " [flags]\n\n%s\n", cmd.summary)
	if cmd.detail != "" {
		b.WriteString(cmd.detail + "\n")
	}
	b.WriteString("\nflags:\n" + flagSet(cmd, io.Discard).FlagUsages())
	return strings.TrimRight(b.String(), "\n")
}

// revision is the source revision, set at link time by make build
// (-X main.revision=$(git describe --always --dirty)).
var revision string

// version describes the binary: its source revision, its code identity (the
// stamp of the embedded code manifest) and its build.
// versionInfo is what --version prints, and --version --json as JSON.
type versionInfo struct {
	Revision     string   `json:"revision"`
	CodeIdentity string   `json:"code_identity,omitempty"`
	CodeError    string   `json:"code_error,omitempty"` // why there is no code identity
	Tags         []string `json:"tags"`
	Go           string   `json:"go"`
	Platform     string   `json:"platform"`
}

func readVersion() versionInfo {
	v := versionInfo{Revision: "(unknown revision: built without make, outside git or with -buildvcs=false)", Tags: []string{}}
	if revision != "" {
		v.Revision = revision
	} else if bi, ok := debug.ReadBuildInfo(); ok {
		var r, at, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				r = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if r != "" {
			v.Revision = r
			if modified == "true" {
				v.Revision += " (with uncommitted changes)"
			}
			if at != "" {
				v.Revision += ", committed " + at
			}
		}
	}
	m, err := codeid.Embedded()
	if err != nil {
		v.CodeError = err.Error()
		v.Go, v.Platform = runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH
		return v
	}
	v.CodeIdentity = codeid.Stamp
	v.Tags = append(v.Tags, m.Tags()...)
	v.Go, v.Platform = m.GoVersion(), m.GOOS()+"/"+m.GOARCH()
	return v
}

func version() string {
	v := readVersion()
	var b strings.Builder
	rev := v.Revision
	if revision != "" {
		rev = "revision " + rev
	}
	fmt.Fprintf(&b, "pipeline %s\n", rev)
	if v.CodeError != "" {
		fmt.Fprintf(&b, "code identity: none (%s)\n", v.CodeError)
		fmt.Fprintf(&b, "go %s %s", v.Go, v.Platform)
		return b.String()
	}
	fmt.Fprintf(&b, "code identity %s (the code manifest's stamp)\n", v.CodeIdentity)
	tags := strings.Join(v.Tags, ",")
	if tags == "" {
		tags = "(none: MuJoCo tasks fail)"
	}
	fmt.Fprintf(&b, "build tags %s\n", tags)
	fmt.Fprintf(&b, "go %s %s", v.Go, v.Platform)
	return b.String()
}

func versionJSON() string {
	b, _ := json.Marshal(readVersion())
	return string(b)
}

func noArgs(c *Config) []string {
	if len(c.Args) != 0 {
		return []string{fmt.Sprintf("pipeline %s: unexpected arguments %q", c.Command, c.Args)}
	}
	return nil
}

// oneArg checks that a command has exactly one argument, what it names.
func oneArg(what string) func(c *Config) []string {
	return func(c *Config) []string {
		if len(c.Args) != 1 {
			return []string{fmt.Sprintf("pipeline %s: takes exactly one %s argument, got %d", c.Command, what, len(c.Args))}
		}
		return nil
	}
}

var oneTask, oneFile = oneArg("TASK"), oneArg("FILE")

func showArgs(c *Config) []string {
	if len(c.Args) != 1 && len(c.Args) != 2 {
		return []string{fmt.Sprintf("pipeline show: takes a TASK and optionally one FILE of its output, got %d arguments", len(c.Args))}
	}
	return nil
}

func auditArgs(c *Config) []string {
	var p []string
	if len(c.Args) != 1 {
		p = append(p, fmt.Sprintf("pipeline audit: takes exactly one FIGURE argument (a file under --figures or an artifact ID), got %d", len(c.Args)))
	}
	if c.AuditX != "" {
		if x, err := strconv.ParseFloat(c.AuditX, 64); err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			p = append(p, fmt.Sprintf("pipeline audit: --x %q is not a finite number", c.AuditX))
		}
	}
	return p
}

// replayArgs checks replay's TASK and --scratch.
func replayArgs(c *Config) []string {
	return append(oneTask(c), scratchArgs(c)...)
}

// scratchArgs checks that --scratch is outside the store: a re-execution
// writes a store and an event log of its own there, which must never land
// in the real store.
func scratchArgs(c *Config) []string {
	if c.Scratch == "" {
		return nil
	}
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			return filepath.Clean(p)
		}
		if r, err := filepath.EvalSymlinks(a); err == nil {
			return r
		}
		// Not there yet: resolve its nearest existing parent.
		if r, err := filepath.EvalSymlinks(filepath.Dir(a)); err == nil {
			return filepath.Join(r, filepath.Base(a))
		}
		return a
	}
	sc, st := abs(c.Scratch), abs(c.Store)
	if rel, err := filepath.Rel(st, sc); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return []string{fmt.Sprintf("pipeline %s: --scratch %s is inside the store %s; give a directory outside it", c.Command, c.Scratch, c.Store)}
	}
	if rel, err := filepath.Rel(sc, st); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return []string{fmt.Sprintf("pipeline %s: --scratch %s holds the store %s; give a directory outside it", c.Command, c.Scratch, c.Store)}
	}
	return nil
}

func verifyArgs(c *Config) []string {
	var p []string
	switch {
	case c.All && c.Sample > 0:
		p = append(p, "pipeline verify: give --all or --sample N, not both")
	case c.Against != "" && (len(c.Args) > 0 || c.All || c.Sample > 0):
		p = append(p, "pipeline verify: --against compares figures; give it alone, without TARGETs, --all or --sample")
	case len(c.Args) == 0 && !c.All && c.Sample == 0 && c.Against == "":
		p = append(p, "pipeline verify: give TARGETs, --all, --sample N or --against DIR")
	}
	return append(p, scratchArgs(c)...)
}

func exportArgs(c *Config) []string {
	var p []string
	if len(c.Args) == 0 {
		p = append(p, "pipeline export: takes one or more TARGETs (stages, task paths or prefixes)")
	}
	if c.BundleFile == "" {
		p = append(p, "pipeline export: --to FILE is required")
	}
	return p
}

func publishArgs(c *Config) []string {
	p := noArgs(c)
	if c.BundleFile == "" {
		p = append(p, "pipeline publish: --to DIR is required")
	}
	return p
}

func workerArgs(c *Config) []string {
	if c.Runner != "" {
		if len(c.Args) != 0 {
			return []string{fmt.Sprintf("pipeline %s --runner: takes no SPEC argument, got %d", c.Command, len(c.Args))}
		}
		return nil
	}
	if len(c.Args) != 1 {
		return []string{fmt.Sprintf("pipeline %s: takes exactly one SPEC argument, got %d", c.Command, len(c.Args))}
	}
	return nil
}
