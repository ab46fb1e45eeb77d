package main

import (
	"encoding/json"
	"fmt"
	"io"

	"zorepro/pipeline"
	"zorepro/pipeline/provenance"
)

// whyCmd says what changed in a task's identity since its last run.
type whyCmd struct {
	planFlags
	outputFlags
	task string
}

func (c *whyCmd) doc() commandDoc {
	return commandDoc{name: "why", args: "TASK", summary: "what changed in a task's identity since its last run"}
}

func (c *whyCmd) define(f *flagSet) {
	c.planFlags.define(f)
	c.outputFlags.define(f, false)
}

func (c *whyCmd) check(args []string) []string {
	if p := oneArg("why", "TASK", args); p != nil {
		return p
	}
	c.task = args[0]
	return nil
}

func (c *whyCmd) run(inv *invocation) (int, error) {
	return c.reading(inv, func(eng *pipeline.Engine) (int, error) { return c.why(eng, inv.stdout) })
}

func (c *whyCmd) why(eng *pipeline.Engine, stdout io.Writer) (int, error) {
	if _, err := provenance.Find(eng.Plan, c.task); err != nil {
		return exitInvalid, err
	}
	xs, err := provenance.New(eng).Explain()
	if err != nil {
		return exitFailed, err
	}
	for _, x := range xs {
		if x.Task != c.task {
			continue
		}
		doc := whyDoc{Profile: c.profile, Task: x.Task, Do: x.Do, Reason: x.Reason, Action: x.Action, Output: x.Output, RecordedRun: x.RecordedRun}
		switch {
		case x.Recorded == nil:
		case x.Action != "" && x.Do == provenance.WouldCache && pipeline.Action(x.Recorded) == pipeline.Action(x.Transcript):
			doc.Unchanged = true
			if x.Previous != nil {
				doc.PreviousDiff = pipeline.DiffTranscripts(x.Previous, x.Recorded)
			}
		default:
			doc.Diff = pipeline.DiffTranscripts(x.Recorded, x.Transcript)
		}
		if c.json {
			return exitOK, json.NewEncoder(stdout).Encode(doc)
		}
		printWhy(stdout, doc)
	}
	return exitOK, nil
}

// whyDoc is what why --json prints.
type whyDoc struct {
	Profile     string `json:"profile"`
	Task        string `json:"task"`
	Do          string `json:"do"` // "cached" or "run"
	Reason      string `json:"reason"`
	Action      string `json:"action,omitempty"`
	Output      string `json:"output,omitempty"`
	RecordedRun uint64 `json:"recorded_run,omitempty"` // 0: never run
	Unchanged   bool   `json:"unchanged"`              // identity unchanged since RecordedRun
	// Diff is the transcript diff since RecordedRun ("- recorded", "+ now").
	Diff []string `json:"diff,omitempty"`
	// PreviousDiff is, for an unchanged task, how RecordedRun differed from
	// the run before it.
	PreviousDiff []string `json:"previous_diff,omitempty"`
}

func printWhy(w io.Writer, d whyDoc) {
	verb := "would run"
	if d.Do == provenance.WouldCache {
		verb = "cached"
	}
	fmt.Fprintf(w, "%s: %s (%s)\n", d.Task, verb, d.Reason)
	switch {
	case d.RecordedRun == 0:
		fmt.Fprintln(w, "no recorded run of this task")
	case d.Unchanged:
		fmt.Fprintf(w, "identity unchanged since run %d\n", d.RecordedRun)
		if len(d.PreviousDiff) > 0 {
			fmt.Fprintln(w, "that run differed from the one before it in:")
			for _, l := range d.PreviousDiff {
				fmt.Fprintln(w, "  "+l)
			}
		}
	default:
		fmt.Fprintf(w, "changes since run %d (- recorded, + now):\n", d.RecordedRun)
		for _, l := range d.Diff {
			fmt.Fprintln(w, "  "+l)
		}
	}
}
