package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// A command is one verb of the CLI. Each has its own type, in its own
// file, holding only its own settings: define binds them to its flags,
// check takes the positional arguments once the flags are decoded, run
// does the work.
type command interface {
	doc() commandDoc
	define(f *flagSet)
	check(args []string) []string
	run(inv *invocation) (int, error)
}

// commandDoc is what help says of a command.
type commandDoc struct {
	name    string
	args    string // the arguments' synopsis, e.g. "TASK [FILE]"
	summary string // one line, for the command list
	detail  string // what `help CMD` adds
}

// invocation is what a command runs with: the context (cancelled by SIGINT
// or SIGTERM) and the output streams. Notes go to stderr; results, and the
// only JSON document of --json, to stdout.
type invocation struct {
	name           string
	ctx            context.Context
	stdout, stderr io.Writer
}

// commands returns a fresh value of every command, in the order help lists
// them.
func commands() []command {
	return []command{
		&runCmd{}, &statusCmd{}, &dagCmd{}, &whyCmd{}, &eventsCmd{}, &showCmd{}, &auditCmd{}, &replayCmd{},
		&verifyCmd{}, &reportCmd{}, &compareCmd{}, &workerCmd{}, &exportCmd{}, &importCmd{}, &publishCmd{}, &pushCmd{}, &pullCmd{},
		&keygenCmd{}, &gcCmd{}, &serveCmd{},
	}
}

// lookup returns a fresh value of the command name.
func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.doc().name == name {
			return c, true
		}
	}
	return nil, false
}

// flagsOf returns cmd's flags, bound to cmd.
func flagsOf(cmd command, stderr io.Writer) *flagSet {
	f := newFlagSet(cmd.doc().name, stderr)
	cmd.define(f)
	return f
}

// usageError is a bad command line (exit 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// helpRequest is a request for help or the version: msg goes to stdout and
// the exit code is 0.
type helpRequest struct{ msg string }

func (e *helpRequest) Error() string { return e.msg }

// parse decodes the command line, PIPELINE_* variables and the
// configuration file into a command's settings. Help and version
// requests are *helpRequest errors; bad input is a *usageError listing
// every problem.
func parse(args []string, stderr io.Writer) (command, error) {
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
	name := cmd.doc().name
	fs := flagsOf(cmd, stderr)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, &helpRequest{help(cmd)}
		}
		return nil, &usageError{"pipeline " + name + ": " + err.Error() + "\n(run 'pipeline help " + name + "' for its flags)"}
	}
	v := viper.New()
	v.SetEnvPrefix("PIPELINE")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	if err := v.BindPFlags(fs.FlagSet); err != nil {
		return nil, err
	}
	if err := readConfigFile(v); err != nil {
		return nil, &usageError{err.Error()}
	}
	problems := fs.decode(v)
	problems = append(problems, cmd.check(fs.Args())...)
	if len(problems) > 0 {
		return nil, &usageError{strings.Join(problems, "\n")}
	}
	return cmd, nil
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
	known := map[string]bool{}
	for _, c := range commands() {
		flagsOf(c, io.Discard).VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
	}
	var problems []string
	for _, k := range slices.Sorted(slices.Values(file.AllKeys())) {
		if !known[k] {
			problems = append(problems, fmt.Sprintf("configuration %s: unknown setting %q (settings are flag names, e.g. executor, jobs, slurm-partition)", path, k))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return v.MergeConfigMap(file.AllSettings())
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
	for _, c := range commands() {
		d := c.doc()
		fmt.Fprintf(&b, "\n  %-7s %s", d.name, d.summary)
	}
	b.WriteString("\n\nrun 'pipeline help <command>' for a command's arguments and flags")
	return b.String()
}

// help is the help of one command: synopsis, what it does, its flags.
func help(cmd command) string {
	d := cmd.doc()
	var b strings.Builder
	fmt.Fprintf(&b, "usage: pipeline %s", d.name)
	if d.args != "" {
		b.WriteString(" " + d.args)
	}
	fmt.Fprintf(&b, " [flags]\n\n%s\n", d.summary)
	if d.detail != "" {
		b.WriteString(d.detail + "\n")
	}
	b.WriteString("\nflags:\n" + flagsOf(cmd, io.Discard).FlagUsages())
	return strings.TrimRight(b.String(), "\n")
}

// noArgs is the check of a command that takes no arguments.
func noArgs(name string, args []string) []string {
	if len(args) != 0 {
		return []string{fmt.Sprintf("pipeline %s: unexpected arguments %q", name, args)}
	}
	return nil
}

// oneArg checks that a command has exactly one argument, what it names.
func oneArg(name, what string, args []string) []string {
	if len(args) != 1 {
		return []string{fmt.Sprintf("pipeline %s: takes exactly one %s argument, got %d", name, what, len(args))}
	}
	return nil
}
