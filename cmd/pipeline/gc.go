package main

import (
	"encoding/json"
	"fmt"
	"time"

	"zorepro/pipeline/provenance"
	"zorepro/pipeline/remote"
)

// gcCmd removes store entries no recorded run references, or (--remote)
// what no kept target reaches on a remote.
type gcCmd struct {
	outputFlags
	storeDir            string
	dryRun, checkpoints bool
	// --remote
	remote, sign string
	keep         []string
	delete       bool
	grace        time.Duration
}

func (c *gcCmd) doc() commandDoc {
	return commandDoc{name: "gc", summary: "remove store entries that no recorded run references (--remote: what no kept target reaches on a remote)",
		detail: "With --remote REMOTE --keep TARGET...: the index's tasks the targets name, with every upstream task whose output\n" +
			"they read (as their action entries record it, whatever revision pushed them), are kept with everything they reach;\n" +
			"the rest is listed, and removed only with --delete. Objects younger than --grace are spared (a push in progress)."}
}

func (c *gcCmd) define(f *flagSet) {
	storeFlag(f, &c.storeDir)
	c.outputFlags.define(f, false)
	f.Bool(&c.dryRun, "dry-run", "report what would be done, do nothing")
	f.Bool(&c.checkpoints, "checkpoints", "also remove the checkpoints of tasks that finished")
	f.String(&c.remote, "remote", "", "collect a remote's garbage instead: "+remoteUsage)
	f.Strings(&c.keep, "keep", "with --remote: the targets (stages, task paths or prefixes) whose results stay")
	f.Bool(&c.delete, "delete", "with --remote: remove (without it, only list what would be removed)")
	f.Duration(&c.grace, "grace", time.Hour, "with --remote: spare objects younger than this")
	f.String(&c.sign, "sign", "", "with --remote: re-sign the rewritten index with this key file")
}

func (c *gcCmd) check(args []string) []string {
	p := noArgs("gc", args)
	switch {
	case c.remote != "":
		p = append(p, checkRemote("remote", c.remote)...)
		if len(c.keep) == 0 {
			p = append(p, "pipeline gc --remote: give --keep TARGET... (what stays); gc of a remote never removes everything")
		}
		if c.dryRun || c.checkpoints {
			p = append(p, "pipeline gc --remote: --dry-run and --checkpoints are for a store (a remote's gc is a dry run unless --delete)")
		}
	case len(c.keep) > 0 || c.delete || c.sign != "":
		p = append(p, "pipeline gc: --keep, --delete and --sign go with --remote")
	}
	return p
}

func (c *gcCmd) run(inv *invocation) (int, error) {
	if c.remote != "" {
		return c.runRemote(inv)
	}
	stdout := inv.stdout
	// Read-write: holding the log's lock keeps runs from adding references
	// while we collect. No plan: gc keeps what any recorded run references.
	eng, closeLog, err := openStore(inv, c.storeDir, openMode{mustExist: true})
	if err != nil {
		return exitInvalidOr(err), err
	}
	defer closeLog()
	rep, err := provenance.New(eng).GC(provenance.GCOptions{DryRun: c.dryRun, Checkpoints: c.checkpoints})
	if err != nil {
		return exitFailed, err
	}
	if c.json {
		return exitOK, json.NewEncoder(stdout).Encode(rep)
	}
	verb := "removed"
	if rep.DryRun {
		verb = "would remove"
	}
	fmt.Fprintf(stdout, "%d store entries, %d referenced by recorded runs\n", rep.Entries, rep.Referenced)
	fmt.Fprintf(stdout, "%s %d unreferenced entries (%s", verb, rep.Removed, bytesText(rep.RemovedBytes))
	if rep.Checkpoints > 0 {
		fmt.Fprintf(stdout, ", of them %d checkpoints of finished tasks", rep.Checkpoints)
	}
	fmt.Fprintf(stdout, ") and %d temp or quarantined files (%s)\n", rep.Leftovers, bytesText(rep.LeftoverBytes))
	if len(rep.Unreadable) > 0 {
		fmt.Fprintf(stdout, "%d recorded outputs are unreadable (their tasks will recompute): %v\n", len(rep.Unreadable), rep.Unreadable)
	}
	return exitOK, nil
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// runRemote collects a remote's garbage.
func (c *gcCmd) runRemote(inv *invocation) (int, error) {
	var key *remote.Key
	if c.sign != "" {
		var err error
		if key, err = readKey(c.sign); err != nil {
			return exitInvalid, fmt.Errorf("--sign: %w", err)
		}
	}
	b, err := openRemote(inv.ctx, c.remote)
	if err != nil {
		return exitInvalid, err
	}
	rep, err := remote.GC(inv.ctx, b, remote.GCOptions{Keep: c.keep, Delete: c.delete, Grace: c.grace, Sign: key})
	if err != nil {
		if inv.ctx.Err() != nil {
			return exitInterrupted, err
		}
		return exitFailed, err
	}
	if c.json {
		return exitOK, json.NewEncoder(inv.stdout).Encode(rep)
	}
	verb := "would remove"
	if rep.Deleted {
		verb = "removed"
	}
	fmt.Fprintf(inv.stdout, "%s: keeping %d tasks (%d objects, %s)\n", rep.Remote, rep.KeptTasks, rep.KeptObjects, bytesText(rep.KeptBytes))
	fmt.Fprintf(inv.stdout, "%s %d action entries and %d objects (%s), and %d of the index's tasks; %d younger than %s spared\n",
		verb, rep.Actions, rep.Objects, bytesText(rep.Bytes), rep.Dropped, rep.Young, c.grace)
	if !rep.Deleted {
		fmt.Fprintln(inv.stdout, "(a dry run: --delete removes them)")
	}
	if rep.Unsigned {
		fmt.Fprintln(inv.stdout, "the rewritten index lost its signatures: sign it again with --sign KEY")
	}
	return exitOK, nil
}
