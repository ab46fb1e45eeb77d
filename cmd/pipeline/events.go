package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"zorepro/pipeline/events"
	"zorepro/pipeline/task"
)

// eventsCmd prints a task's recorded events, iteration by iteration.
type eventsCmd struct {
	outputFlags
	storeDir string
	task     string
}

func (c *eventsCmd) doc() commandDoc {
	return commandDoc{name: "events", args: "TASK", summary: "a task's recorded events, iteration by iteration",
		detail: "--json prints one object; --jsonl streams one JSON object per event, then a summary object."}
}

func (c *eventsCmd) define(f *flagSet) {
	storeFlag(f, &c.storeDir)
	c.outputFlags.define(f, true)
}

func (c *eventsCmd) check(args []string) []string {
	p := append(oneArg("events", "TASK", args), c.outputFlags.check("events")...)
	if len(args) == 1 {
		c.task = args[0]
	}
	return p
}

func (c *eventsCmd) run(inv *invocation) (int, error) {
	stdout := inv.stdout
	path := filepath.Join(c.storeDir, "events.db")
	if _, err := os.Stat(path); err != nil {
		return exitInvalid, fmt.Errorf("no event log at %s: nothing has run with --store %s yet", path, c.storeDir)
	}
	log, err := openLog(inv, c.storeDir, inspect)
	if err != nil {
		return exitFailed, err
	}
	defer log.Close()
	taskPath := c.task
	evs, err := log.Events(taskPath)
	if err != nil {
		return exitFailed, err
	}
	iterRuns, err := log.IterRuns(taskPath)
	if err != nil {
		return exitFailed, err
	}
	if len(evs) == 0 && len(iterRuns) == 0 {
		return exitInvalid, fmt.Errorf("no events recorded for task %q", taskPath)
	}
	var its []runIter
	for _, run := range iterRuns {
		got, err := log.Iterations(taskPath, run)
		if err != nil {
			return exitFailed, err
		}
		for _, it := range got {
			its = append(its, runIter{Type: "iter", Run: run, Iter: it})
		}
	}
	runs, err := runProfiles(log, evs, iterRuns)
	if err != nil {
		return exitFailed, err
	}
	sum := eventsSummary{Type: "summary", Task: taskPath, Runs: runs, Events: len(evs), Iterations: len(its)}
	enc := json.NewEncoder(stdout)
	switch {
	case c.json:
		return exitOK, enc.Encode(eventsDoc{eventsSummary: sum, EventList: evs, IterList: its})
	case c.jsonl:
		for _, ev := range evs {
			if err := enc.Encode(ev); err != nil {
				return exitFailed, err
			}
		}
		for _, it := range its {
			if err := enc.Encode(it); err != nil {
				return exitFailed, err
			}
		}
		return exitOK, enc.Encode(sum)
	}
	for _, r := range runs {
		fmt.Fprintf(stdout, "run %d: profile %s\n", r.Run, r.Profile)
	}
	for _, ev := range evs {
		line := fmt.Sprintf("#%d run %d %s", ev.Seq, ev.Run, ev.Type)
		for _, kv := range [][2]string{{"state", ev.State}, {"action", ev.Action}, {"output", ev.Output}, {"error", ev.Error}} {
			if kv[1] != "" {
				line += " " + kv[0] + "=" + kv[1]
			}
		}
		if ev.Checkpoint != nil {
			line += fmt.Sprintf(" checkpoint=%s@%d", ev.Checkpoint.Content, ev.Checkpoint.Iteration)
		}
		if len(ev.Data) > 0 {
			line += " " + string(ev.Data)
		}
		fmt.Fprintln(stdout, line)
	}
	for _, it := range its {
		line := fmt.Sprintf("iter run %d it=%d samples=%d digest=%016x", it.Run, it.Iter.Iteration, it.Iter.Samples, it.Iter.Digest)
		for _, m := range it.Iter.Metrics {
			line += fmt.Sprintf(" %s=%s", m.Name, task.FormatFloat(m.Value))
		}
		fmt.Fprintln(stdout, line)
	}
	fmt.Fprintf(stdout, "%d events and %d iteration events of %s in %d runs\n", sum.Events, sum.Iterations, taskPath, len(runs))
	return exitOK, nil
}

// runIter is one iteration event as events prints it in JSON.
type runIter struct {
	Type string    `json:"type"` // "iter"
	Run  uint64    `json:"run"`
	Iter task.Iter `json:"iter"`
}

// runProfile names the profile a run was started with.
type runProfile struct {
	Run     uint64 `json:"run"`
	Profile string `json:"profile"`
}

// eventsSummary is the last line of events --jsonl; events --json is it
// with the lists.
type eventsSummary struct {
	Type       string       `json:"type"` // "summary"
	Task       string       `json:"task"`
	Runs       []runProfile `json:"runs"`
	Events     int          `json:"events"`
	Iterations int          `json:"iterations"`
}

type eventsDoc struct {
	eventsSummary
	EventList []events.Event `json:"event_list"`
	IterList  []runIter      `json:"iteration_list"`
}

// runProfiles returns the runs that recorded evs and the iteration runs,
// ascending, each with the profile its run event names.
func runProfiles(log *events.Log, evs []events.Event, iterRuns []uint64) ([]runProfile, error) {
	ids := slices.Clone(iterRuns)
	for _, ev := range evs {
		ids = append(ids, ev.Run)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	out := make([]runProfile, 0, len(ids))
	for _, id := range ids {
		p, err := profileOf(log, id)
		if err != nil {
			return nil, err
		}
		if p == "" {
			p = "unknown"
		}
		out = append(out, runProfile{Run: id, Profile: p})
	}
	return out, nil
}
