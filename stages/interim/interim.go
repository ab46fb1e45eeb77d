package interim

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"zorepro/pipeline"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/provenance"
	"zorepro/pipeline/store"
	"zorepro/stages/report"
)

// Plotted says where an interim report's figure came from.
type Plotted string

const (
	PlottedRecorded Plotted = "recorded" // the plot task's recorded output
	PlottedHere     Plotted = "here"     // plotted now from its recorded inputs
	PlottedPending  Plotted = ""         // not all of its inputs are recorded
)

// Figure is one figure of an interim report: its per-seed table, or why
// it cannot be made yet.
type Figure struct {
	Task    string  `json:"task"`
	Plotted Plotted `json:"plotted"`
	Pending string  `json:"pending,omitempty"`
	tables  map[string]report.Table
	// Images are the PNG files of a figure plotted here (by name): the
	// scratch store they were plotted into is gone once Compute returns.
	Images map[string][]byte `json:"-"`
}

// Doc is an interim report (what report --interim --json prints).
type Doc struct {
	Interim bool                 `json:"interim"`
	Profile string               `json:"profile"`
	Figures []Figure             `json:"figures"`
	Counts  map[string]int       `json:"counts"`
	Claims  []report.ClaimResult `json:"claims"`
	// Pending are the claims whose figure cannot be made yet, with why.
	Pending map[string]string `json:"pending"`
	// Results are the computed claims with their declarations, in the
	// order of Claims.
	Results []report.Result `json:"-"`
}

// Memo keeps, for each plot task, the figure Compute last plotted from
// its recorded inputs and the output IDs of those inputs: while they stay
// the same the figure is not plotted again (serve's claims page computes
// every 20 s while it is read, and the paper profile's figures take
// seconds to plot). Compute calls that share a Memo run one at a time.
type Memo struct {
	mu   sync.Mutex
	figs map[string]memoFigure // by plot task
}

type memoFigure struct {
	inputs string // the inputs' output IDs, one "path output" line each
	fig    *Figure
}

// Compute computes the claims of the plan's task reportTask from what
// eng's store records now (eng's log may be a running run's snapshot, or
// the running run's own log). profile is the profile shown. memo, if not
// nil, keeps the figures plotted here for the next Compute on eng.
func Compute(ctx context.Context, eng *pipeline.Engine, reportTask, profile string, memo *Memo) (*Doc, error) {
	if _, err := reportOf(eng, reportTask); err != nil {
		return nil, err // before a dry run that cannot serve
	}
	xs, err := provenance.New(eng).Explain()
	if err != nil {
		return nil, err
	}
	return ComputeExplained(ctx, eng, xs, reportTask, profile, memo)
}

// ComputeExplained is Compute from xs, a dry run of eng's plan on what
// its store records now (provenance.Record.Explain), which the caller
// may share with other readers of the same state (serve's prediction of
// the remaining time).
func ComputeExplained(ctx context.Context, eng *pipeline.Engine, xs []provenance.Explained, reportTask, profile string, memo *Memo) (*Doc, error) {
	if memo != nil {
		memo.mu.Lock()
		defer memo.mu.Unlock()
	}
	rt, err := reportOf(eng, reportTask)
	if err != nil {
		return nil, err
	}
	rec := provenance.New(eng)
	cached := map[string]string{}
	for _, x := range xs {
		if x.Do == provenance.WouldCache {
			cached[x.Task] = x.Output
		}
	}
	dir, err := os.MkdirTemp("", "pipeline-interim-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	mk := &maker{eng: eng, rec: rec, cached: cached, dir: dir, memo: memo}
	defer mk.close()
	doc := &Doc{Interim: true, Profile: profile, Counts: map[string]int{}, Pending: map[string]string{}}
	tables := map[string]report.Table{}
	for _, ft := range rt.Inputs["figures"] {
		f, err := mk.figure(ctx, ft)
		if err != nil {
			return nil, err
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
		doc.Results = append(doc.Results, r)
	}
	return doc, nil
}

// reportOf is eng's plan's report task of that name, or an error
// wrapping ErrNoReport.
func reportOf(eng *pipeline.Engine, name string) (*dag.Task, error) {
	rt := eng.Plan.Task(name)
	if rt == nil {
		return nil, fmt.Errorf("%w: %s has no %q stage", ErrNoReport, eng.Plan.File, name)
	}
	return rt, nil
}

// Made is how many of the figures could be made.
func (d *Doc) Made() int {
	n := 0
	for _, f := range d.Figures {
		if f.Plotted != PlottedPending {
			n++
		}
	}
	return n
}

// maker makes the figures of an interim report, opening one scratch
// store for the figures it plots.
type maker struct {
	eng    *pipeline.Engine
	rec    *provenance.Record
	cached map[string]string // task → output, for the tasks a run would cache
	dir    string
	sc     *provenance.Scratch
	memo   *Memo // nil: plot every figure whose plot task is not recorded
}

func (m *maker) close() {
	if m.sc != nil {
		m.sc.Close()
	}
}

// figure reads or plots one figure task's per-seed tables.
func (m *maker) figure(ctx context.Context, ft *dag.Task) (*Figure, error) {
	f := &Figure{Task: ft.Path}
	if out, ok := m.cached[ft.Path]; ok {
		f.Plotted = PlottedRecorded
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
	var inputs strings.Builder
	for _, path := range slices.Sorted(maps.Keys(deps)) {
		fmt.Fprintf(&inputs, "%s %s\n", path, deps[path])
	}
	if m.memo != nil {
		if mf, ok := m.memo.figs[ft.Path]; ok && mf.inputs == inputs.String() {
			return mf.fig, nil
		}
	}
	f, err := m.plot(ctx, ft, deps)
	if err == nil && m.memo != nil {
		if m.memo.figs == nil {
			m.memo.figs = map[string]memoFigure{}
		}
		m.memo.figs[ft.Path] = memoFigure{inputs: inputs.String(), fig: f}
	}
	return f, err
}

// plot plots one figure task from its recorded inputs (deps: their
// output IDs) into the scratch store, and reads its images and tables.
func (m *maker) plot(ctx context.Context, ft *dag.Task, deps map[string]string) (*Figure, error) {
	f := &Figure{Task: ft.Path}
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
	f.Plotted = PlottedHere
	f.Images = map[string][]byte{}
	for _, e := range es {
		if strings.HasSuffix(e.Name, ".png") {
			if f.Images[e.Name], err = m.sc.Store.Get(e.ID); err != nil {
				return nil, err
			}
		}
	}
	return f, m.readTables(f, es, m.sc.Store.Get)
}

// readTables parses every "<figure>-seeds.csv" of an output.
func (m *maker) readTables(f *Figure, es []pipeline.OutputEntry, get func(id store.ID) ([]byte, error)) error {
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
func (m *maker) pendingWhy(figure string, figs []Figure) string {
	for _, f := range figs {
		if strings.HasSuffix(f.Task, "/"+figure) && f.Pending != "" {
			return f.Task + ": " + f.Pending
		}
	}
	return "no figure " + figure + " among the report's inputs"
}
