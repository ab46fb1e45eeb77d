package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"zorepro/pipeline/bundle"
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
	Command string
	Args    []string
	DAG     string
	Profile string
	// ProfileSet reports that --profile or PIPELINE_PROFILE chose the
	// profile; otherwise inspection commands use the latest run's.
	ProfileSet         bool
	Jobs               int
	Store              string
	Figures            string
	Force              bool
	DryRun             bool
	JSON               bool
	JSONL              bool
	CheckpointInterval time.Duration
	SnapshotInterval   time.Duration
	// Stderr receives notes (e.g. that a snapshot is being read).
	Stderr io.Writer
	// ctx is the invocation's: cancelled by SIGINT or SIGTERM.
	ctx context.Context

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
	// export, publish
	BundleFile string
	// export: > 0 cuts the bundle into volumes of at most this many bytes
	VolumeSize int64
	// verify --against
	Against string
	// gc
	GCCheckpoints bool
	// status
	Times bool
	// report: the claims of what is recorded so far, written nowhere
	Interim bool
	// run: where tasks execute
	Executor string
	Slurm    SlurmConfig
	// worker --runner
	Runner string
	Idle   time.Duration
}

// context is the invocation's context (cancelled by SIGINT or SIGTERM).
func (c *Config) context() context.Context {
	if c.ctx == nil {
		return context.Background()
	}
	return c.ctx
}

// SlurmConfig is the --slurm-* settings of run --executor slurm.
type SlurmConfig struct {
	Partition, Account, Time, Mem, LogDir string
	CPUs, MaxJobs                         int
	Args                                  []string
	Idle, Outage, Stall                   time.Duration
}

// usageError is a bad command line (exit 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// helpRequest is a request for help or the version: msg goes to stdout and
// the exit code is 0.
type helpRequest struct{ msg string }

func (e *helpRequest) Error() string { return e.msg }

// parseConfig decodes the command line and PIPELINE_* variables into a
// Config. Help and version requests are *helpRequest errors; bad input is a
// *usageError listing every problem.
func parseConfig(args []string, stderr io.Writer) (*Config, error) {
	if len(args) == 0 {
		return nil, &usageError{usage()}
	}
	switch args[0] {
	case "-h", "--help", "help":
		if len(args) > 1 && args[0] == "help" && args[1] != "help" {
			cmd, ok := lookup(args[1])
			if !ok {
				return nil, &usageError{fmt.Sprintf("unknown command %q\n%s", args[1], usage())}
			}
			return nil, &helpRequest{help(cmd)}
		}
		return nil, &helpRequest{usage()}
	case "--version", "version":
		switch {
		case len(args) == 1:
			return nil, &helpRequest{version()}
		case len(args) == 2 && args[1] == "--json":
			return nil, &helpRequest{versionJSON()}
		}
		return nil, &usageError{fmt.Sprintf("pipeline %s: takes no arguments but --json, got %q", args[0], args[1:])}
	}
	cmd, ok := lookup(args[0])
	if !ok {
		return nil, &usageError{fmt.Sprintf("unknown command %q\n%s", args[0], usage())}
	}
	fs := flagSet(cmd, stderr)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, &helpRequest{help(cmd)}
		}
		return nil, &usageError{"pipeline " + cmd.name + ": " + err.Error() + "\n(run 'pipeline help " + cmd.name + "' for its flags)"}
	}
	v := viper.New()
	v.SetEnvPrefix("PIPELINE")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	if err := v.BindPFlags(fs); err != nil {
		return nil, err
	}
	if err := readConfigFile(v); err != nil {
		return nil, &usageError{err.Error()}
	}
	c := &Config{Command: cmd.name, Args: fs.Args()}
	problems := decodeFlags(c, fs, v)
	if cmd.check != nil {
		problems = append(problems, cmd.check(c)...)
	}
	if len(problems) > 0 {
		return nil, &usageError{strings.Join(problems, "\n")}
	}
	return c, nil
}

// decodeFlags sets c from the flags the command takes, reporting every
// problem.
func decodeFlags(c *Config, fs *pflag.FlagSet, v *viper.Viper) []string {
	var problems []string
	has := func(name string) bool { return fs.Lookup(name) != nil }
	str := func(name string) string {
		if !has(name) {
			return ""
		}
		return v.GetString(name)
	}
	c.DAG, c.Store, c.Figures = str("dag"), str("store"), str("figures")
	c.Profile = str("profile")
	c.ProfileSet = has("profile") && (fs.Changed("profile") || v.GetString("profile") != "")
	if c.Command == "run" && c.Profile == "" {
		c.Profile = "paper"
	}
	var err error
	if has("jobs") {
		if c.Jobs, err = intSetting(v, "jobs"); err != nil {
			problems = append(problems, err.Error())
		} else if c.Jobs < 1 {
			problems = append(problems, fmt.Sprintf("--jobs (or PIPELINE_JOBS): must be >= 1, got %d", c.Jobs))
		}
	}
	for name, dst := range map[string]*bool{"force": &c.Force, "dry-run": &c.DryRun, "json": &c.JSON, "jsonl": &c.JSONL, "all": &c.All, "keep": &c.Keep, "checkpoints": &c.GCCheckpoints, "times": &c.Times, "events": &c.ShowEvents, "interim": &c.Interim} {
		if !has(name) {
			continue
		}
		if *dst, err = boolSetting(v, name); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if c.JSON && c.JSONL {
		problems = append(problems, fmt.Sprintf("pipeline %s: give at most one of --json and --jsonl", c.Command))
	}
	c.Runner = str("runner")
	for name, dst := range map[string]*time.Duration{"checkpoint-interval": &c.CheckpointInterval, "snapshot-interval": &c.SnapshotInterval,
		"idle": &c.Idle, "slurm-idle": &c.Slurm.Idle, "slurm-outage": &c.Slurm.Outage, "slurm-stall": &c.Slurm.Stall} {
		if !has(name) {
			continue
		}
		if *dst, err = durationSetting(v, name); err != nil {
			problems = append(problems, err.Error())
		} else if *dst < 0 {
			problems = append(problems, "--"+name+": must not be negative")
		}
	}
	c.AuditCurve, c.AuditPanel, c.AuditX = str("curve"), str("panel"), str("x")
	c.Scratch = str("scratch")
	c.BundleFile = str("to")
	if has("volume-size") && str("volume-size") != "" {
		if c.VolumeSize, err = sizeSetting(v, "volume-size"); err != nil {
			problems = append(problems, err.Error())
		} else if c.VolumeSize < bundle.MinVolumeSize {
			problems = append(problems, fmt.Sprintf("--volume-size (or %s): %d bytes is below the least, 1MiB", envName("volume-size"), c.VolumeSize))
		}
	}
	c.Against = str("against")
	if has("until") {
		if c.Until, err = int64Setting(v, "until"); err != nil {
			problems = append(problems, err.Error())
		} else if c.Until < 0 {
			problems = append(problems, fmt.Sprintf("--until (or PIPELINE_UNTIL): must be >= 0, got %d", c.Until))
		}
	}
	if has("sample") {
		if c.Sample, err = intSetting(v, "sample"); err != nil {
			problems = append(problems, err.Error())
		} else if c.Sample < 0 {
			problems = append(problems, fmt.Sprintf("--sample (or PIPELINE_SAMPLE): must be >= 1, got %d", c.Sample))
		}
		if s, err := int64Setting(v, "seed"); err != nil || s < 0 {
			problems = append(problems, fmt.Sprintf("--seed (or PIPELINE_SEED): %q is not a non-negative integer", v.GetString("seed")))
		} else {
			c.SampleSeed = uint64(s)
		}
	}
	if has("executor") {
		switch c.Executor = str("executor"); c.Executor {
		case "local", "slurm":
		default:
			problems = append(problems, fmt.Sprintf("--executor (or PIPELINE_EXECUTOR): %q is neither local nor slurm", c.Executor))
		}
		s := &c.Slurm
		s.Partition, s.Account, s.Time, s.Mem, s.LogDir = str("slurm-partition"), str("slurm-account"), str("slurm-time"), str("slurm-mem"), str("slurm-log-dir")
		s.Args = strings.Fields(str("slurm-args"))
		for name, dst := range map[string]*int{"slurm-cpus": &s.CPUs, "slurm-max-jobs": &s.MaxJobs} {
			if *dst, err = intSetting(v, name); err != nil {
				problems = append(problems, err.Error())
			} else if *dst < 1 {
				problems = append(problems, fmt.Sprintf("--%s (or %s): must be >= 1, got %d", name, envName(name), *dst))
			}
		}
	}
	if has("store") && c.Store == "" {
		problems = append(problems, "--store (or PIPELINE_STORE): must not be empty")
	}
	return problems
}

// readConfigFile reads the configuration file into v, below flags and
// PIPELINE_* variables: the file PIPELINE_CONFIG names, else pipeline.yaml
// in the working directory if there is one. Its keys are flag names
// (e.g. "executor: slurm", "slurm-partition: gpu"); a key that is no flag
// of any command is an error naming the file and the key.
func readConfigFile(v *viper.Viper) error {
	path := os.Getenv("PIPELINE_CONFIG")
	if path == "" {
		if _, err := os.Stat("pipeline.yaml"); err != nil {
			return nil
		}
		path = "pipeline.yaml"
	}
	file := viper.New()
	file.SetConfigFile(path)
	file.SetConfigType("yaml")
	if err := file.ReadInConfig(); err != nil {
		return fmt.Errorf("configuration %s: %w", path, err)
	}
	var problems []string
	for _, k := range slices.Sorted(slices.Values(file.AllKeys())) {
		if _, ok := flagDefs[k]; !ok {
			problems = append(problems, fmt.Sprintf("configuration %s: unknown setting %q (settings are flag names, e.g. executor, jobs, slurm-partition)", path, k))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return v.MergeConfigMap(file.AllSettings())
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

// sizeUnits are the units sizeSetting takes, longest suffix first.
var sizeUnits = []struct {
	suffix string
	bytes  int64
}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}

// sizeSetting reads a size in bytes: a whole number with an optional unit
// (B, KB, MB, GB, KiB, MiB, GiB), e.g. 1900MiB.
func sizeSetting(v *viper.Viper, name string) (int64, error) {
	s := strings.TrimSpace(v.GetString(name))
	unit := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, unit = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.bytes
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/unit {
		return 0, fmt.Errorf("--%s (or %s): %q is not a positive size (a whole number with an optional unit B, KB, MB, GB, KiB, MiB or GiB, e.g. 1900MiB)", name, envName(name), v.GetString(name))
	}
	return n * unit, nil
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
		var hr *helpRequest
		if errors.As(err, &hr) {
			fmt.Fprintln(stdout, hr.msg)
			return exitOK
		}
		fmt.Fprintln(stderr, err)
		if wantsJSON(args) {
			jsonError(stdout, err, exitInvalid)
		}
		return exitInvalid
	}
	c.Stderr, c.ctx = stderr, ctx
	cmd, _ := lookup(c.Command)
	out := &countingWriter{w: stdout}
	code, err := cmd.run(ctx, c, out, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "pipeline:", err)
		switch {
		case errors.Is(err, errPlanningInterrupted):
			code = exitInterrupted
		case errors.Is(err, dag.ErrInvalid):
			code = exitInvalid
		case code == exitOK:
			code = exitFailed
		}
		if (c.JSON || c.JSONL) && out.n == 0 {
			jsonError(stdout, err, code)
		}
	}
	return code
}

// jsonError prints a failed command's error as the one JSON document a
// --json (or --jsonl) caller reads when the command printed none.
func jsonError(w io.Writer, err error, code int) {
	json.NewEncoder(w).Encode(map[string]any{"error": err.Error(), "exit_code": code})
}

// wantsJSON reports whether a command line that failed to parse asked
// for JSON output.
func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--json" || a == "--jsonl" || a == "--json=true" || a == "--jsonl=true" {
			return true
		}
	}
	return false
}

// countingWriter counts what a command writes to stdout.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// errPlanningInterrupted is returned by loadPlan when a signal arrives
// while it plans.
var errPlanningInterrupted = errors.New("interrupted while planning; nothing was recorded")

// loadPlan loads the dag under c's profile (and, for run and verify, cuts
// it to the targets). Planning records nothing, so SIGINT or SIGTERM stops
// it at once (errPlanningInterrupted, exit 130); on a terminal, planning
// that takes over a second shows how many tasks it has planned.
func loadPlan(c *Config) (*dag.Plan, error) {
	var planned atomic.Int64
	type loaded struct {
		plan *dag.Plan
		err  error
	}
	done := make(chan loaded, 1)
	go func() {
		plan, err := dag.LoadWith(c.DAG, c.Profile, stages.Kinds(), dag.Options{Planned: &planned})
		done <- loaded{plan, err}
	}()
	ctx := c.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	shown := false
	clear := func() {
		if shown {
			fmt.Fprint(c.Stderr, "\r\033[K")
		}
	}
	for {
		select {
		case l := <-done:
			clear()
			if l.err != nil || c.Command != "run" && c.Command != "verify" {
				return l.plan, l.err
			}
			return l.plan.Only(c.Args)
		case <-ctx.Done():
			clear()
			return nil, errPlanningInterrupted
		case <-tick.C:
			if c.Stderr != nil && isTerminal(c.Stderr) {
				fmt.Fprintf(c.Stderr, "\rplanning %s (profile %s): %d tasks so far", c.DAG, c.Profile, planned.Load())
				shown = true
			}
		}
	}
}
