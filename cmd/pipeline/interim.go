package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"zorepro/pipeline"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/provenance"
	"zorepro/pipeline/store"
	"zorepro/stages/report"
)

// plotted says where an interim report's figure came from.
type plotted string

const (
	plottedRecorded plotted = "recorded" // the plot task's recorded output
	plottedHere     plotted = "here"     // plotted now from its recorded inputs
	plottedPending  plotted = ""         // not all of its inputs are recorded
)

// interimFigure is one figure of an interim report: its per-seed table, or
// why it cannot be made yet.
type interimFigure struct {
	Task    string  `json:"task"`
	Plotted plotted `json:"plotted"`
	Pending string  `json:"pending,omitempty"`
	tables  map[string]report.Table
}

// interimDoc is what report --interim --json prints.
type interimDoc struct {
	Interim bool                 `json:"interim"`
	Profile string               `json:"profile"`
	Figures []interimFigure      `json:"figures"`
	Counts  map[string]int       `json:"counts"`
	Claims  []report.ClaimResult `json:"claims"`
	// Pending are the claims whose figure cannot be made yet, with why.
	Pending map[string]string `json:"pending"`
}

// cmdReportInterim computes the report's claims from what the store
// records now, for a run still under way (the log may be a running run's
// snapshot). A figure whose plot task is recorded for this binary and
// dag.yaml is read as recorded; one whose inputs all are is plotted into a
// temporary scratch store; the claims of the others are pending, with how
// many of their figure's inputs are recorded. Nothing is written to the
// store, its log or --figures.
func (c *reportCmd) runInterim(inv *invocation) (int, error) {
	ctx, stdout := inv.ctx, inv.stdout
	eng, closeLog, err := c.openEngine(inv, inspect, pipeline.Options{}, nil)
	if err != nil {
		return exitInvalidOr(err), err
	}
	defer closeLog()
	rt := eng.Plan.Task(reportTask)
	if rt == nil {
		return exitInvalid, fmt.Errorf("%s has no %q stage", eng.Plan.File, reportTask)
	}
	rec := provenance.New(eng)
	xs, err := rec.Explain()
	if err != nil {
		return exitFailed, err
	}
	cached := map[string]string{}
	for _, x := range xs {
		if x.Do == provenance.WouldCache {
			cached[x.Task] = x.Output
		}
	}
	dir, err := os.MkdirTemp("", "pipeline-interim-")
	if err != nil {
		return exitFailed, err
	}
	defer os.RemoveAll(dir)
	mk := &interimMaker{eng: eng, rec: rec, cached: cached, dir: dir}
	defer mk.close()
	doc := interimDoc{Interim: true, Profile: c.profile, Counts: map[string]int{}, Pending: map[string]string{}}
	tables := map[string]report.Table{}
	for _, ft := range rt.Inputs["figures"] {
		f, err := mk.figure(ctx, ft)
		if err != nil {
			return exitFailed, err
		}
		for name, tb := range f.tables {
			tables[name] = tb
		}
		doc.Figures = append(doc.Figures, *f)
	}
	for _, v := range report.Verdicts() {
		doc.Counts[string(v)] = 0
	}
	for _, cl := range report.DecodeClaims(rt.Params) {
		tb, ok := tables[cl.Figure]
		if !ok {
			doc.Pending[cl.ID] = mk.pendingWhy(cl.Figure, doc.Figures)
			continue
		}
		r := report.Evaluate(cl, tb)
		doc.Counts[string(r.Verdict)]++
		doc.Claims = append(doc.Claims, report.ResultOf(r))
	}
	if c.json {
		return exitOK, json.NewEncoder(stdout).Encode(doc)
	}
	printInterim(stdout, &doc)
	return exitOK, nil
}

// printInterim prints an interim report: which figures it could make, each
// computed claim's verdict, the pending claims and the counts.
func printInterim(w io.Writer, doc *interimDoc) {
	made := 0
	for _, f := range doc.Figures {
		if f.Plotted != plottedPending {
			made++
		}
	}
	fmt.Fprintf(w, "interim report (profile %s): %d of %d figures can be made from what the store records now; nothing is written\n", doc.Profile, made, len(doc.Figures))
	for _, f := range doc.Figures {
		switch f.Plotted {
		case plottedRecorded:
			fmt.Fprintf(w, "  %-24s recorded\n", f.Task)
		case plottedHere:
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

// interimMaker makes the figures of an interim report, opening one scratch
// store for the figures it plots.
type interimMaker struct {
	eng    *pipeline.Engine
	rec    *provenance.Record
	cached map[string]string // task → output, for the tasks a run would cache
	dir    string
	sc     *provenance.Scratch
}

func (m *interimMaker) close() {
	if m.sc != nil {
		m.sc.Close()
	}
}

// figure reads or plots one figure task's per-seed tables.
func (m *interimMaker) figure(ctx context.Context, ft *dag.Task) (*interimFigure, error) {
	f := &interimFigure{Task: ft.Path}
	if out, ok := m.cached[ft.Path]; ok {
		f.Plotted = plottedRecorded
		es, err := m.eng.Outputs(out)
		if err != nil {
			return nil, err
		}
		return f, m.readTables(f, es, m.eng.Store.Get)
	}
	deps, have, want := map[string]string{}, 0, 0
	for _, ins := range ft.Inputs {
		for _, in := range ins {
			want++
			if out, ok := m.cached[in.Path]; ok {
				deps[in.Path] = out
				have++
			}
		}
	}
	if have < want {
		f.Pending = fmt.Sprintf("%d of its %d inputs recorded", have, want)
		return f, nil
	}
	if m.sc == nil {
		sc, err := provenance.OpenScratch(m.dir)
		if err != nil {
			return nil, err
		}
		m.sc = sc
	}
	info, _ := json.Marshal(map[string]any{"interim": ft.Path})
	one, err := m.rec.Execute(ctx, ft, deps, m.sc, 0, info)
	if err != nil {
		return nil, err
	}
	if one.Err != nil {
		return nil, fmt.Errorf("%s: %w", ft.Path, one.Err)
	}
	id, err := store.ParseID(one.Output)
	if err != nil {
		return nil, err
	}
	data, err := m.sc.Store.Get(id)
	if err != nil {
		return nil, err
	}
	es, err := pipeline.DecodeOutputs(data)
	if err != nil {
		return nil, err
	}
	f.Plotted = plottedHere
	return f, m.readTables(f, es, m.sc.Store.Get)
}

// readTables parses every "<figure>-seeds.csv" of an output.
func (m *interimMaker) readTables(f *interimFigure, es []pipeline.OutputEntry, get func(id store.ID) ([]byte, error)) error {
	f.tables = map[string]report.Table{}
	for _, e := range es {
		stem, ok := strings.CutSuffix(e.Name, "-seeds.csv")
		if !ok {
			continue
		}
		data, err := get(e.ID)
		if err != nil {
			return fmt.Errorf("%s %s: %w", f.Task, e.Name, err)
		}
		if f.tables[stem], err = report.ParseSeedsCSV(data); err != nil {
			return fmt.Errorf("%s %s: %w", f.Task, e.Name, err)
		}
	}
	return nil
}

// pendingWhy says why a claim's figure cannot be made yet.
func (m *interimMaker) pendingWhy(figure string, figs []interimFigure) string {
	for _, f := range figs {
		if strings.HasSuffix(f.Task, "/"+figure) && f.Pending != "" {
			return f.Task + ": " + f.Pending
		}
	}
	return "no figure " + figure + " among the report's inputs"
}
