package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"zorepro/pipeline"
	"zorepro/pipeline/bundle"
	"zorepro/pipeline/dag"
)

// importCmd merges a bundle into the store, every byte checked first.
type importCmd struct {
	planFlags
	outputFlags
	file string
}

func (c *importCmd) doc() commandDoc {
	return commandDoc{name: "import", args: "FILE", summary: "merge a bundle into the store (every byte checked first); refuse one that contradicts the store",
		detail: "Each task is imported when this binary and dag.yaml give it the bundle's action; the others are counted.\n" +
			"A task whose action the store records with another output is a reproducibility failure: nothing is imported."}
}

func (c *importCmd) define(f *flagSet) {
	c.planFlags.define(f)
	c.outputFlags.define(f, false)
}

func (c *importCmd) check(args []string) []string {
	p := oneArg("import", "FILE", args)
	if p == nil {
		c.file = args[0]
	}
	return p
}

// cmdImport merges a bundle into the store: under the bundle's profile
// unless --profile says otherwise, each task whose action this binary and
// dag.yaml give it too.
func (c *importCmd) run(inv *invocation) (int, error) {
	stdout := inv.stdout
	var closeLog func()
	defer func() {
		if closeLog != nil {
			closeLog()
		}
	}()
	open := func(m *bundle.Manifest) (*pipeline.Engine, error) {
		if !c.profileSet {
			c.profile, c.profileSet = m.Profile, true
		}
		eng, cl, err := c.openEngine(inv, openMode{}, pipeline.Options{}, nil)
		closeLog = cl
		return eng, err
	}
	path, _ := filepath.Abs(c.file)
	info := map[string]any{"import": path, "args": append([]string{"import"}, os.Args[min(len(os.Args), 2):]...)}
	sum, err := bundle.Import(inv.ctx, c.file, open, info)
	switch {
	case inv.ctx.Err() != nil:
		return exitInterrupted, errors.New("import interrupted: nothing was recorded (entries already stored stay, complete); the same command completes it")
	case errors.Is(err, bundle.ErrBundle) || errors.Is(err, os.ErrNotExist):
		return exitInvalid, err
	case errors.Is(err, dag.ErrInvalid):
		return exitInvalid, err
	case err != nil:
		return exitFailed, err // the store refused it (diverged, locked, corrupt) or a write failed
	}
	if c.json {
		return exitOK, json.NewEncoder(stdout).Encode(sum)
	}
	fmt.Fprintf(stdout, "imported %d tasks (%d store entries) from %s as run %d; %d were already recorded\n",
		len(sum.Imported), sum.Entries, sum.File, sum.Run, len(sum.Present))
	if n := len(sum.Other); n > 0 {
		fmt.Fprintf(stdout, "%d task(s) left out: this binary and dag.yaml give them another action (the bundle's code identity is %s), e.g. %s\n", n, sum.Code, strings.Join(sum.Other[:min(3, n)], ", "))
	}
	if n := len(sum.Unplanned); n > 0 {
		fmt.Fprintf(stdout, "%d task(s) left out: not in this dag's profile %s, e.g. %s\n", n, c.profile, strings.Join(sum.Unplanned[:min(3, n)], ", "))
	}
	return exitOK, nil
}
