package main

import (
	"encoding/json"
	"fmt"

	"zorepro/pipeline/provenance"
)

// gcCmd removes store entries no recorded run references.
type gcCmd struct {
	outputFlags
	storeDir            string
	dryRun, checkpoints bool
}

func (c *gcCmd) doc() commandDoc {
	return commandDoc{name: "gc", summary: "remove store entries that no recorded run references"}
}

func (c *gcCmd) define(f *flagSet) {
	storeFlag(f, &c.storeDir)
	c.outputFlags.define(f, false)
	f.Bool(&c.dryRun, "dry-run", "report what would be done, do nothing")
	f.Bool(&c.checkpoints, "checkpoints", "also remove the checkpoints of tasks that finished")
}

func (c *gcCmd) check(args []string) []string { return noArgs("gc", args) }

func (c *gcCmd) run(inv *invocation) (int, error) {
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
