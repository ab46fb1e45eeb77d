package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"zorepro/pipeline/crashpoint"
	"zorepro/pipeline/dag"
	"zorepro/stages"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailed      = 1
	exitInvalid     = 2
	exitInterrupted = 130
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if err := crashpoint.WriteCounts(); err != nil { // a test seam; see package crashpoint
		fmt.Fprintln(os.Stderr, "pipeline:", err)
	}
	os.Exit(code)
}

// Config is every setting of one invocation, decoded once.
type Config struct {
	Command            string
	Args               []string
	DAG                string
	Profile            string
	Jobs               int
	Store              string
	Figures            string
	Force              bool
	DryRun             bool
	JSON               bool
	CheckpointInterval time.Duration
	SnapshotInterval   time.Duration
	// Stderr receives notes (e.g. that a snapshot is being read).
	Stderr io.Writer

	// audit
	AuditCurve, AuditPanel, AuditX string
	// replay
	Until      int64
	ShowEvents bool
	// verify
	All        bool
	Sample     int
	SampleSeed uint64
	// replay and verify
	Scratch string
	Keep    bool
	// gc
	GCCheckpoints bool
	// status
	Times bool
}

// usageError is a bad command line (exit 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

const usage = `usage: pipeline <command> [flags]

commands:
  run      [TARGET...]: execute the DAG, or only the named stages/tasks and
           what they need (only what changed)
  status   last recorded state of every task
  dag      print the expanded task graph
  why      TASK: what changed in a task's identity since its last run
  events   TASK: a task's recorded events
  show     TASK [FILE]: the files of a task's recorded output, or one file's bytes
  audit    FIGURE: the runs, seeds, streams and events behind a figure or one of its points
  replay   TASK: re-execute a task and compare its events with the recorded ones
  verify   re-execute cached tasks and compare their outputs with the recorded ones
  gc       remove store entries that no recorded run references

run 'pipeline <command> --help' for its flags`

// parseConfig decodes flags and PIPELINE_* variables into a Config.
func parseConfig(args []string, stderr io.Writer) (*Config, error) {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		return nil, &usageError{usage}
	}
	cmd := args[0]
	switch cmd {
	case "run", "status", "dag", "why", "events", "show", "audit", "replay", "verify", "gc":
	default:
		return nil, &usageError{fmt.Sprintf("unknown command %q\n%s", cmd, usage)}
	}
	fs := pflag.NewFlagSet(cmd, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.String("dag", "dag.yaml", "the DAG file")
	fs.String("profile", "paper", "profile: paper, quick or smoke (as dag.yaml defines)")
	fs.Int("jobs", runtime.NumCPU(), "number of workers")
	fs.String("store", "artifacts", "store root (content store and events.db)")
	fs.String("figures", "figures", "directory figures are exported to")
	fs.Bool("json", false, "print JSON")
	switch cmd {
	case "run":
		fs.Bool("force", false, "rerun every task, ignoring the cache")
		fs.Bool("dry-run", false, "print what would run, run nothing")
		fs.Duration("checkpoint-interval", 10*time.Second, "minimum time between checkpoints of a task")
		fs.Duration("snapshot-interval", 30*time.Second, "how often to refresh the event log snapshot that other commands read during the run (0: never)")
	case "audit":
		fs.String("curve", "", "audit only this curve (its key, e.g. ars)")
		fs.String("panel", "", "audit only this panel (its key, e.g. 1000)")
		fs.String("x", "", "audit the plotted point nearest this x, with the chain behind it")
	case "replay":
		fs.Int64("until", 0, "stop after this iteration and compare up to it (0: the whole task)")
		fs.Bool("events", false, "print every compared event pair")
	case "verify":
		fs.Bool("all", false, "verify every cached task")
		fs.Int("sample", 0, "verify this many cached tasks, picked with --seed")
		fs.Uint64("seed", 1, "seed of the --sample pick")
	case "status":
		fs.Bool("times", false, "print the recorded task time per stage instead of the task list")
	case "gc":
		fs.Bool("dry-run", false, "report what would be removed, remove nothing")
		fs.Bool("checkpoints", false, "also remove the checkpoints of tasks that finished")
	}
	if cmd == "replay" || cmd == "verify" {
		fs.String("scratch", "", "directory to re-execute into (default: a temporary directory, removed afterwards)")
		fs.Bool("keep", false, "keep the scratch directory")
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, &usageError{""}
		}
		return nil, &usageError{"pipeline " + cmd + ": " + err.Error()}
	}
	v := viper.New()
	v.SetEnvPrefix("PIPELINE")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	if err := v.BindPFlags(fs); err != nil {
		return nil, err
	}
	c := &Config{Command: cmd, Args: fs.Args()}
	var problems []string
	c.DAG = v.GetString("dag")
	c.Profile = v.GetString("profile")
	c.Store = v.GetString("store")
	c.Figures = v.GetString("figures")
	var err error
	if c.Jobs, err = intSetting(v, "jobs"); err != nil {
		problems = append(problems, err.Error())
	} else if c.Jobs < 1 {
		problems = append(problems, fmt.Sprintf("--jobs (or PIPELINE_JOBS): %d is out of range (must be >= 1)", c.Jobs))
	}
	for name, dst := range map[string]*bool{"force": &c.Force, "dry-run": &c.DryRun, "json": &c.JSON, "all": &c.All, "keep": &c.Keep, "checkpoints": &c.GCCheckpoints, "times": &c.Times, "events": &c.ShowEvents} {
		if fs.Lookup(name) == nil {
			continue
		}
		if *dst, err = boolSetting(v, name); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if cmd == "run" {
		if c.CheckpointInterval, err = durationSetting(v, "checkpoint-interval"); err != nil {
			problems = append(problems, err.Error())
		} else if c.CheckpointInterval < 0 {
			problems = append(problems, "--checkpoint-interval: must not be negative")
		}
		if c.SnapshotInterval, err = durationSetting(v, "snapshot-interval"); err != nil {
			problems = append(problems, err.Error())
		} else if c.SnapshotInterval < 0 {
			problems = append(problems, "--snapshot-interval: must not be negative")
		}
	}
	c.AuditCurve, c.AuditPanel, c.AuditX = v.GetString("curve"), v.GetString("panel"), v.GetString("x")
	c.Scratch = v.GetString("scratch")
	switch cmd {
	case "replay":
		if c.Until, err = int64Setting(v, "until"); err != nil {
			problems = append(problems, err.Error())
		} else if c.Until < 0 {
			problems = append(problems, fmt.Sprintf("--until (or PIPELINE_UNTIL): %d is out of range (must be >= 0)", c.Until))
		}
	case "verify":
		if c.Sample, err = intSetting(v, "sample"); err != nil {
			problems = append(problems, err.Error())
		} else if c.Sample < 0 {
			problems = append(problems, fmt.Sprintf("--sample (or PIPELINE_SAMPLE): %d is out of range (must be >= 1)", c.Sample))
		}
		if s, err := int64Setting(v, "seed"); err != nil || s < 0 {
			problems = append(problems, fmt.Sprintf("--seed (or PIPELINE_SEED): %q is not a non-negative integer", v.GetString("seed")))
		} else {
			c.SampleSeed = uint64(s)
		}
		if c.All == (c.Sample > 0) {
			problems = append(problems, "pipeline verify: give exactly one of --all and --sample N")
		}
	}
	if c.Store == "" {
		problems = append(problems, "--store (or PIPELINE_STORE): must not be empty")
	}
	switch cmd {
	case "why", "events", "replay":
		if len(c.Args) != 1 {
			problems = append(problems, fmt.Sprintf("pipeline %s: takes exactly one TASK argument, got %d", cmd, len(c.Args)))
		}
	case "run":
		// TARGETs: stages or tasks to run with their ancestors (dag.Plan.Only).
	case "show":
		if len(c.Args) != 1 && len(c.Args) != 2 {
			problems = append(problems, fmt.Sprintf("pipeline show: takes a TASK and optionally one FILE of its output, got %d arguments", len(c.Args)))
		}
	case "audit":
		if len(c.Args) != 1 {
			problems = append(problems, fmt.Sprintf("pipeline audit: takes exactly one FIGURE argument (a file under --figures or an artifact ID), got %d", len(c.Args)))
		}
	default:
		if len(c.Args) != 0 {
			problems = append(problems, fmt.Sprintf("pipeline %s: unexpected arguments %q", cmd, c.Args))
		}
	}
	if len(problems) > 0 {
		return nil, &usageError{strings.Join(problems, "\n")}
	}
	return c, nil
}

func envName(flag string) string {
	return "PIPELINE_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

func intSetting(v *viper.Viper, name string) (int, error) {
	var n int
	if _, err := fmt.Sscan(v.GetString(name), &n); err != nil || fmt.Sprint(n) != strings.TrimSpace(v.GetString(name)) {
		return 0, fmt.Errorf("--%s (or %s): %q is not an integer", name, envName(name), v.GetString(name))
	}
	return n, nil
}

func int64Setting(v *viper.Viper, name string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v.GetString(name)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("--%s (or %s): %q is not an integer", name, envName(name), v.GetString(name))
	}
	return n, nil
}

func boolSetting(v *viper.Viper, name string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v.GetString(name))) {
	case "true", "1", "yes":
		return true, nil
	case "false", "0", "no", "":
		return false, nil
	}
	return false, fmt.Errorf("--%s (or %s): %q is not true or false", name, envName(name), v.GetString(name))
}

func durationSetting(v *viper.Viper, name string) (time.Duration, error) {
	d, err := time.ParseDuration(v.GetString(name))
	if err != nil {
		return 0, fmt.Errorf("--%s (or %s): %q is not a duration (e.g. 10s)", name, envName(name), v.GetString(name))
	}
	return d, nil
}

// Main runs one invocation and returns its exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parseConfig(args, stderr)
	if err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
			if ue.msg != "" {
				fmt.Fprintln(stderr, ue.msg)
			}
			if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
				return exitOK
			}
			return exitInvalid
		}
		fmt.Fprintln(stderr, err)
		return exitInvalid
	}
	c.Stderr = stderr
	var code int
	switch c.Command {
	case "run":
		code, err = cmdRun(ctx, c, stdout, stderr)
	case "status":
		code, err = cmdStatus(c, stdout)
	case "dag":
		code, err = cmdDAG(c, stdout)
	case "why":
		code, err = cmdWhy(c, stdout)
	case "events":
		code, err = cmdEvents(c, stdout)
	case "show":
		code, err = cmdShow(c, stdout)
	case "audit":
		code, err = cmdAudit(c, stdout)
	case "replay":
		code, err = cmdReplay(ctx, c, stdout)
	case "verify":
		code, err = cmdVerify(ctx, c, stdout)
	case "gc":
		code, err = cmdGC(c, stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "pipeline:", err)
		if errors.Is(err, dag.ErrInvalid) {
			return exitInvalid
		}
		if code == exitOK {
			code = exitFailed
		}
	}
	return code
}

func loadPlan(c *Config) (*dag.Plan, error) {
	plan, err := dag.Load(c.DAG, c.Profile, stages.Kinds())
	if err != nil || c.Command != "run" {
		return plan, err
	}
	return plan.Only(c.Args)
}
