package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"zorepro/pipeline"
	"zorepro/stages/interim"
)

// runInterim computes the report's claims from what the store records now
// (stages/interim), for a run still under way, and prints them.
func (c *reportCmd) runInterim(inv *invocation) (int, error) {
	eng, closeLog, err := c.openEngine(inv, inspect, pipeline.Options{}, nil)
	if err != nil {
		return exitInvalidOr(err), err
	}
	defer closeLog()
	doc, err := interim.Compute(inv.ctx, eng, reportTask, c.profile, nil)
	if errors.Is(err, interim.ErrNoReport) {
		return exitInvalid, err
	} else if err != nil {
		return exitFailed, err
	}
	if c.json {
		return exitOK, json.NewEncoder(inv.stdout).Encode(doc)
	}
	printInterim(inv.stdout, doc)
	return exitOK, nil
}

// printInterim prints an interim report: which figures it could make, each
// computed claim's verdict, the pending claims and the counts.
func printInterim(w io.Writer, doc *interim.Doc) {
	made := doc.Made()
	fmt.Fprintf(w, "interim report (profile %s): %d of %d figures can be made from what the store records now; nothing is written\n", doc.Profile, made, len(doc.Figures))
	for _, f := range doc.Figures {
		switch f.Plotted {
		case interim.PlottedRecorded:
			fmt.Fprintf(w, "  %-24s recorded\n", f.Task)
		case interim.PlottedHere:
			fmt.Fprintf(w, "  %-24s plotted here from its recorded inputs\n", f.Task)
		default:
			fmt.Fprintf(w, "  %-24s pending: %s\n", f.Task, f.Pending)
		}
	}
	rows := make([]verdictRow, len(doc.Claims))
	for i, cl := range doc.Claims {
		rows[i] = verdictRow{ID: cl.ID, Figure: cl.Figure, Section: cl.Section, Verdict: cl.Verdict}
	}
	fmt.Fprintf(w, "%s; %d pending (their figures cannot be made yet)\n", printVerdicts(w, rows, doc.Counts), len(doc.Pending))
}
