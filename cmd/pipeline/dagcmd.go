package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"zorepro/pipeline/dag"
	"zorepro/stages/tune"
)

// dagCmd prints the expanded task graph with each task's inputs.
type dagCmd struct {
	planFlags
	outputFlags
}

func (c *dagCmd) doc() commandDoc {
	return commandDoc{name: "dag", summary: "the expanded task graph with each task's inputs"}
}

func (c *dagCmd) define(f *flagSet) {
	c.planFlags.define(f)
	c.outputFlags.define(f, false)
}

func (c *dagCmd) check(args []string) []string { return noArgs("dag", args) }

func (c *dagCmd) run(inv *invocation) (int, error) {
	stdout := inv.stdout
	if _, err := os.Stat(filepath.Join(c.storeDir, "events.db")); err == nil {
		log, err := openLog(inv, c.storeDir, inspect)
		if err != nil {
			return exitInvalidOr(err), err
		}
		err = c.resolveProfile(inv, log)
		log.Close()
		if err != nil {
			return exitFailed, err
		}
	} else if err := c.resolveProfile(inv, nil); err != nil {
		return exitFailed, err
	}
	plan, err := c.loadPlan(inv, nil)
	if err != nil {
		return exitInvalid, err
	}
	doc := dagDoc{Profile: plan.Profile, File: c.dagFile, Tasks: len(plan.Tasks)}
	for _, s := range plan.Stages {
		st := dagStage{Name: s.Name, Kind: s.Kind}
		for _, t := range plan.Tasks {
			if t.Stage != s {
				continue
			}
			dt := dagTask{Path: t.Path, Inputs: map[string][]string{}, Skipped: skippedOf(t)}
			for _, slot := range sortedSlotNames(t.Inputs) {
				for _, up := range t.Inputs[slot] {
					dt.Inputs[slot] = append(dt.Inputs[slot], up.Path)
				}
			}
			st.Tasks = append(st.Tasks, dt)
		}
		doc.Stages = append(doc.Stages, st)
	}
	if c.json {
		return exitOK, json.NewEncoder(stdout).Encode(doc)
	}
	for _, s := range doc.Stages {
		fmt.Fprintf(stdout, "stage %s (kind %s, %d tasks)\n", s.Name, s.Kind, len(s.Tasks))
		for _, t := range s.Tasks {
			fmt.Fprintf(stdout, "  %s\n", t.Path)
			for _, slot := range slices.Sorted(maps.Keys(t.Inputs)) {
				for _, up := range t.Inputs[slot] {
					fmt.Fprintf(stdout, "      %s <- %s\n", slot, up)
				}
			}
			for _, l := range skipLines(t.Skipped) {
				fmt.Fprintf(stdout, "      %s\n", l)
			}
		}
	}
	fmt.Fprintf(stdout, "%d tasks in %d stages (profile %s)\n", doc.Tasks, len(doc.Stages), doc.Profile)
	return exitOK, nil
}

// dagDoc is what dag --json prints.
type dagDoc struct {
	Profile string     `json:"profile"`
	File    string     `json:"file"`
	Stages  []dagStage `json:"stages"`
	Tasks   int        `json:"tasks"`
}

type dagStage struct {
	Name  string    `json:"name"`
	Kind  string    `json:"kind"`
	Tasks []dagTask `json:"tasks"`
}

type dagTask struct {
	Path    string              `json:"path"`
	Inputs  map[string][]string `json:"inputs"`            // slot -> upstream task paths
	Skipped []tune.Skip         `json:"skipped,omitempty"` // infeasible grid points a tune task leaves out
}

// skippedOf returns the grid points a tune task leaves out as infeasible.
func skippedOf(t *dag.Task) []tune.Skip {
	if s, ok := t.Runner.(interface{ Skipped() []tune.Skip }); ok {
		return s.Skipped()
	}
	return nil
}

// skipLines summarises skipped grid points: one line per reason, with how
// many points it leaves out and the first of them.
func skipLines(skips []tune.Skip) []string {
	var reasons []string
	count := map[string]int{}
	first := map[string]string{}
	for _, s := range skips {
		if count[s.Reason] == 0 {
			reasons = append(reasons, s.Reason)
			first[s.Reason] = s.Point
		}
		count[s.Reason]++
	}
	var out []string
	for _, r := range reasons {
		out = append(out, fmt.Sprintf("skips %d infeasible grid point(s), first %s: %s", count[r], first[r], r))
	}
	return out
}

func sortedSlotNames(m map[string][]*dag.Task) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
