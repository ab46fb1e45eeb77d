package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

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
	os.Exit(Main(ctx, os.Args[1:], os.Stdout, os.Stderr))
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
}

// usageError is a bad command line (exit 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

const usage = `usage: pipeline <command> [flags]

commands:
  run      execute the DAG (only what changed)
  status   last recorded state of every task
  dag      print the expanded task graph
  why      TASK: what changed in a task's identity since its last run
  events   TASK: a task's recorded events

run 'pipeline <command> --help' for its flags`

// parseConfig decodes flags and PIPELINE_* variables into a Config.
func parseConfig(args []string, stderr io.Writer) (*Config, error) {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		return nil, &usageError{usage}
	}
	cmd := args[0]
	switch cmd {
	case "run", "status", "dag", "why", "events":
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
	fs.Bool("force", false, "rerun every task, ignoring the cache")
	fs.Bool("dry-run", false, "print what would run, run nothing")
	fs.Bool("json", false, "print one JSON object")
	fs.Duration("checkpoint-interval", 10*time.Second, "minimum time between checkpoints of a task")
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
	for name, dst := range map[string]*bool{"force": &c.Force, "dry-run": &c.DryRun, "json": &c.JSON} {
		if *dst, err = boolSetting(v, name); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if c.CheckpointInterval, err = durationSetting(v, "checkpoint-interval"); err != nil {
		problems = append(problems, err.Error())
	} else if c.CheckpointInterval < 0 {
		problems = append(problems, "--checkpoint-interval: must not be negative")
	}
	if c.Store == "" {
		problems = append(problems, "--store (or PIPELINE_STORE): must not be empty")
	}
	switch cmd {
	case "why", "events":
		if len(c.Args) != 1 {
			problems = append(problems, fmt.Sprintf("pipeline %s: takes exactly one TASK argument, got %d", cmd, len(c.Args)))
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
	return dag.Load(c.DAG, c.Profile, stages.Kinds())
}
