package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"zorepro/pipeline"
	"zorepro/pipeline/provenance"
	"zorepro/pipeline/store"
	"zorepro/stages/report"
)

// reportTask is the dag's report stage (one task).
const reportTask = "report"

// reportCmd (re)builds the reproduction report from the recorded figures,
// or (--interim) computes the claims of what is recorded so far.
type reportCmd struct {
	planFlags
	outputFlags
	figures string
	interim bool
}

func (c *reportCmd) doc() commandDoc {
	return commandDoc{name: "report", summary: "(re)build the reproduction report (report.html, report.md, claims.json) from the recorded figures",
		detail: "Runs the report task alone: every figure it needs must be recorded for the profile (nothing upstream runs).\n" +
			"Prints each claim's verdict; --json prints claims.json (every claim's statistic, 95% interval and verdict).\n" +
			"--interim: the verdicts of the claims whose figures can be made from what the store records now (a run may\n" +
			"still be writing it); figures whose inputs are all recorded are plotted into a temporary directory, the other\n" +
			"claims are listed as pending; nothing is written to the store or --figures."}
}

func (c *reportCmd) define(f *flagSet) {
	c.planFlags.define(f)
	figuresFlag(f, &c.figures)
	c.outputFlags.define(f, false)
	f.Bool(&c.interim, "interim", "the claims of the figures the store's records already make, computed now and written nowhere")
}

func (c *reportCmd) check(args []string) []string { return noArgs("report", args) }

// run (re)builds the reproduction report from what the store
// records: it runs the report task alone (its figures must all be
// recorded: nothing upstream is run), exports report.html, report.md and
// claims.json under --figures, and prints the claims table (--json: the
// claims document).
func (c *reportCmd) run(inv *invocation) (int, error) {
	ctx, stdout := inv.ctx, inv.stdout
	if c.interim {
		return c.runInterim(inv)
	}
	eng, closeLog, err := c.openEngine(inv, openMode{mustExist: true}, pipeline.Options{FiguresDir: c.figures}, nil)
	if err != nil {
		return exitInvalidOr(err), err
	}
	defer closeLog()
	if eng.Plan.Task(reportTask) == nil {
		return exitInvalid, fmt.Errorf("%s has no %q stage", eng.Plan.File, reportTask)
	}
	if eng.Plan, err = eng.Plan.Only([]string{reportTask}); err != nil {
		return exitInvalid, err
	}
	xs, err := provenance.New(eng).Explain()
	if err != nil {
		return exitFailed, err
	}
	var missing []string
	for _, x := range xs {
		if x.Do == provenance.WouldRun && x.Task != reportTask {
			missing = append(missing, x.Task)
		}
	}
	if len(missing) > 0 {
		return exitFailed, fmt.Errorf("the report needs %d task(s) the store does not hold for profile %s (e.g. %s): run 'pipeline run %s --profile %s' first",
			len(missing), c.profile, missing[0], reportTask, c.profile)
	}
	eng.Opt.Log, eng.Opt.Args = io.Discard, []string{"report"}
	res, err := eng.Run(ctx)
	switch {
	case errors.Is(err, pipeline.ErrInterrupted):
		return exitInterrupted, errors.New("interrupted")
	case err != nil:
		if res != nil && res.Errors[reportTask] != "" {
			return exitFailed, errors.New(res.Errors[reportTask])
		}
		return exitFailed, err
	}
	data, err := reportOutput(eng, "claims.json")
	if err != nil {
		return exitFailed, err
	}
	if c.json {
		_, err := stdout.Write(data)
		return exitOK, err
	}
	var doc struct {
		Claims []verdictRow
		Counts map[string]int
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return exitFailed, err
	}
	fmt.Fprintf(stdout, "%s\n", printVerdicts(stdout, doc.Claims, doc.Counts))
	for _, name := range slices.Sorted(maps.Keys(res.Figures)) {
		if f := res.Figures[name]; strings.HasPrefix(name, "report.") || name == "claims.json" {
			fmt.Fprintf(stdout, "report %s %s\n", f.Path, f.ID)
		}
	}
	return exitOK, nil
}

// verdictRow is what a claims table line shows of a claim (read from
// claims.json without its findings).
type verdictRow struct {
	ID      string         `json:"id"`
	Figure  string         `json:"figure"`
	Section string         `json:"section"`
	Verdict report.Verdict `json:"verdict"`
}

// printVerdicts prints a line per claim (verdict, id, figure, section) and
// returns the verdict counts in the report's order ("N holds, N
// contradicted, N inconclusive, N uninformative, N not run, N reported").
func printVerdicts(w io.Writer, claims []verdictRow, counts map[string]int) string {
	for _, cl := range claims {
		fmt.Fprintf(w, "%-13s %-24s %-18s %s\n", cl.Verdict, cl.ID, cl.Figure, cl.Section)
	}
	var parts []string
	for _, v := range report.Verdicts() {
		parts = append(parts, fmt.Sprintf("%d %s", counts[string(v)], v.Words()))
	}
	return strings.Join(parts, ", ")
}

// reportOutput reads one file of the report task's latest output.
func reportOutput(eng *pipeline.Engine, name string) ([]byte, error) {
	states, err := eng.Events.LastStates()
	if err != nil {
		return nil, err
	}
	for _, s := range states {
		if s.Task != reportTask {
			continue
		}
		es, err := eng.Outputs(s.Output)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			if e.Name == name {
				return eng.Store.Get(e.ID)
			}
		}
	}
	return nil, fmt.Errorf("the report task recorded no %s (%w)", name, store.ErrNotFound)
}
