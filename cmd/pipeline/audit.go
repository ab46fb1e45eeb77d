package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"zorepro/pipeline"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
	"zorepro/stages/plot"
)

// errSelection is a --panel, --curve or --x that selects nothing.
var errSelection = errors.New("audit: bad selection")

// taskInfo is one task of an audit chain as the event log records it.
type taskInfo struct {
	Task     string               `json:"task"`
	Action   string               `json:"action"`
	Output   string               `json:"output"`
	Run      uint64               `json:"run"`
	Segments []pipeline.Segment   `json:"segments"`
	Code     string               `json:"code"`
	Seed     *uint64              `json:"seed,omitempty"`
	Params   []string             `json:"params"`
	Streams  *pipeline.Streams    `json:"streams,omitempty"`
	Inputs   []pipeline.InputRef  `json:"inputs,omitempty"`
	Platform []string             `json:"platform,omitempty"`
	prod     *pipeline.Production `json:"-"`
}

func infoOf(p *pipeline.Production) *taskInfo {
	ti := &taskInfo{Task: p.Task, Action: p.Action, Output: p.Output, Run: p.Run, Segments: p.Segments,
		Code: p.Code(), Params: p.Params(), Streams: p.Streams, Inputs: p.Inputs(), prod: p}
	if s, ok := p.Seed(); ok {
		ti.Seed = &s
	}
	for _, k := range []string{"go", "goarch", "build", "native"} {
		for _, v := range p.Lines(k) {
			ti.Platform = append(ti.Platform, k+" "+v)
		}
	}
	return ti
}

// tuneInfo is the tune task whose choice a train task used.
type tuneInfo struct {
	*taskInfo
	Chosen json.RawMessage `json:"chosen"`
}

// seedTrace is one seed's contribution to a plotted point.
type seedTrace struct {
	Seed       uint64     `json:"seed"`
	Y          float64    `json:"y"`
	Evaluate   *taskInfo  `json:"evaluate"`
	Event      *task.Iter `json:"event,omitempty"`
	Train      *taskInfo  `json:"train,omitempty"`
	TrainEvent *task.Iter `json:"train_event,omitempty"`
	// Snapshot says whether the train task's output holds a snapshot at
	// the event's iteration whose digest is the evaluated one.
	Snapshot  *bool     `json:"snapshot_match,omitempty"`
	Tune      *tuneInfo `json:"tune,omitempty"`
	UsedTuned bool      `json:"used_tuned,omitempty"`
	Data      *taskInfo `json:"data,omitempty"`
}

type aggregate struct {
	Mean float64 `json:"mean"`
	Lo   float64 `json:"band_lo"`
	Hi   float64 `json:"band_hi"`
	N    int     `json:"n"`
}

// auditPoint is one plotted point, recomputed from its events.
type auditPoint struct {
	Panel      string      `json:"panel"`
	Curve      string      `json:"curve"`
	X          float64     `json:"x"`
	Plotted    aggregate   `json:"plotted"`
	Recomputed aggregate   `json:"recomputed"`
	Equal      bool        `json:"equal"`
	Problems   []string    `json:"problems,omitempty"`
	Seeds      []seedTrace `json:"seeds,omitempty"`
}

type auditReport struct {
	Figure  string       `json:"figure"`
	ID      string       `json:"id"`
	Entry   string       `json:"entry"`
	Plot    *taskInfo    `json:"plot"`
	Band    string       `json:"band"`
	X, Y    string       `json:"-"`
	Mode    string       `json:"mode"`
	Points  []auditPoint `json:"points"`
	Checked int          `json:"points_checked"`
	Equal   int          `json:"points_equal"`
	Events  int          `json:"events_used"`
}

// auditor resolves and caches productions while auditing one figure.
type auditor struct {
	eng   *pipeline.Engine
	prods map[string]*pipeline.Production // by output ID
	iters map[string][]task.Iter          // by output ID
	tunes map[string]*tuneInfo
}

func (a *auditor) produced(task, output string) (*pipeline.Production, error) {
	if p, ok := a.prods[output]; ok {
		return p, nil
	}
	p, err := pipeline.Produced(a.eng.Events, task, output)
	if err != nil {
		return nil, err
	}
	a.prods[output] = p
	return p, nil
}

func (a *auditor) iterations(p *pipeline.Production) ([]task.Iter, error) {
	if its, ok := a.iters[p.Output]; ok {
		return its, nil
	}
	its, err := p.Iterations(a.eng.Events)
	if err != nil {
		return nil, err
	}
	a.iters[p.Output] = its
	return its, nil
}

// coordsOf parses the "axis=value" segments of a task path.
func coordsOf(path string) map[string]string {
	out := map[string]string{}
	for _, seg := range strings.Split(path, "/") {
		if k, v, ok := strings.Cut(seg, "="); ok {
			out[k] = v
		}
	}
	return out
}

// valueOf reads a named quantity of an iteration event as the plot reads
// the same column of curve.csv.
func valueOf(it task.Iter, name string) (float64, bool) {
	switch name {
	case "iteration":
		return float64(it.Iteration), true
	case "samples":
		return float64(it.Samples), true
	}
	for _, m := range it.Metrics {
		if m.Name == name {
			return m.Value, true
		}
	}
	return 0, false
}

func cmdAudit(c *Config, stdout io.Writer) (int, error) {
	eng, closeLog, err := openEngine(c, true)
	if err != nil {
		return exitInvalidOr(err), err
	}
	defer closeLog()
	ref := c.Args[0]
	var content []byte
	for _, p := range []string{ref, filepath.Join(c.Figures, ref)} {
		if b, err := os.ReadFile(p); err == nil {
			content, ref = b, p
			break
		}
	}
	src, err := eng.FindFigure(ref, content)
	if err != nil {
		if errors.Is(err, pipeline.ErrNotRecorded) || content == nil {
			return exitInvalid, err
		}
		return exitFailed, err
	}
	a := &auditor{eng: eng, prods: map[string]*pipeline.Production{}, iters: map[string][]task.Iter{}, tunes: map[string]*tuneInfo{}}
	rep, err := a.audit(c, ref, src)
	if errors.Is(err, errSelection) {
		return exitInvalid, err
	} else if err != nil {
		return exitFailed, err
	}
	if c.JSON {
		if err := json.NewEncoder(stdout).Encode(rep); err != nil {
			return exitFailed, err
		}
	} else {
		printAudit(stdout, rep, c.AuditX != "")
	}
	if rep.Equal != rep.Checked {
		return exitFailed, fmt.Errorf("audit: %d of %d points differ from the values recomputed from their events", rep.Checked-rep.Equal, rep.Checked)
	}
	return exitOK, nil
}

func (a *auditor) audit(c *Config, ref string, src *pipeline.FigureSource) (*auditReport, error) {
	pp := src.Production
	param := func(name, def string) string {
		if v, ok := pp.Param(name); ok {
			return v
		}
		return def
	}
	figure := param("figure", "")
	rep := &auditReport{Figure: ref, ID: src.ID.String(), Entry: src.Entry, Plot: infoOf(pp),
		Band: param("band", string(plot.BandMinMaxStd)), X: param("x", "samples"), Y: param("y", ""), Mode: param("mode", plot.ModeCurves)}
	read := func(name string) ([]byte, error) {
		b, err := a.eng.ReadOutput(pp.Output, name)
		if err != nil {
			return nil, fmt.Errorf("%s of %s: %w", name, pp.Task, err)
		}
		return b, nil
	}
	cb, err := read(figure + ".csv")
	if err != nil {
		return nil, err
	}
	rows, err := plot.ReadCurvesCSV(cb)
	if err != nil {
		return nil, fmt.Errorf("%s.csv of %s: %w", figure, pp.Task, err)
	}
	sb, err := read(figure + "-seeds.csv")
	if err != nil {
		return nil, err
	}
	seedRows, err := plot.ReadSeedsCSV(sb)
	if err != nil {
		return nil, fmt.Errorf("%s-seeds.csv of %s: %w", figure, pp.Task, err)
	}
	var floor *float64
	if v, ok := pp.Param("band_floor"); ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: band_floor %q: %w", pp.Task, v, err)
		}
		floor = &f
	}
	yScale := 1.0
	if v, ok := pp.Param("y_scale"); ok && rep.Mode == plot.ModeFinal {
		if yScale, err = strconv.ParseFloat(v, 64); err != nil {
			return nil, fmt.Errorf("%s: y_scale %q: %w", pp.Task, v, err)
		}
	}
	panelAxis, curveAxis, xCoord := param("panel", ""), param("curve", ""), param("x_coord", "")

	// Select the rows to audit.
	sel := rows[:0:0]
	for _, r := range rows {
		if (c.AuditCurve == "" || r.Curve == c.AuditCurve) && (c.AuditPanel == "" || r.Panel == c.AuditPanel) {
			sel = append(sel, r)
		}
	}
	if len(sel) == 0 {
		return nil, fmt.Errorf("%w: %s has no curve %q in panel %q (it has %s)", errSelection, figure, c.AuditCurve, c.AuditPanel, describeCurves(rows))
	}
	if c.AuditX != "" {
		want, err := strconv.ParseFloat(c.AuditX, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: --x %q is not a number", errSelection, c.AuditX)
		}
		sel = nearest(sel, want)
	}
	detail := c.AuditX != ""

	inputs := map[[3]string][]pipeline.InputRef{}
	for _, in := range pp.Inputs() {
		co := coordsOf(in.Task)
		k := [3]string{co[panelAxis], co[curveAxis], co["seed"]}
		inputs[k] = append(inputs[k], in)
	}
	for _, r := range sel {
		pt := auditPoint{Panel: r.Panel, Curve: r.Curve, X: r.X, Plotted: aggregate{r.Mean, r.Lo, r.Hi, r.N}}
		var ys []float64
		for _, s := range seedRows {
			if s.Panel != r.Panel || s.Curve != r.Curve || !plot.SameFloat(s.X, r.X) {
				continue
			}
			tr, y, err := a.trace(inputs, r, s, panelAxis, rep, xCoord, yScale, detail)
			if err != nil {
				pt.Problems = append(pt.Problems, err.Error())
				continue
			}
			if !plot.SameFloat(y, s.Y) {
				pt.Problems = append(pt.Problems, fmt.Sprintf("seed %d: the event gives %s, the figure's -seeds.csv %s", s.Seed, task.FormatFloat(y), task.FormatFloat(s.Y)))
			}
			ys = append(ys, y)
			rep.Events++
			if detail {
				pt.Seeds = append(pt.Seeds, *tr)
			}
		}
		mean, lo, hi, err := plot.PointOf(ys, plot.Band(rep.Band), floor)
		if err != nil {
			pt.Problems = append(pt.Problems, err.Error())
		}
		pt.Recomputed = aggregate{mean, lo, hi, len(ys)}
		pt.Equal = len(pt.Problems) == 0 && len(ys) == r.N && plot.SameFloat(mean, r.Mean) && plot.SameFloat(lo, r.Lo) && plot.SameFloat(hi, r.Hi)
		rep.Checked++
		if pt.Equal {
			rep.Equal++
		}
		if detail || !pt.Equal {
			rep.Points = append(rep.Points, pt)
		}
	}
	return rep, nil
}

// trace follows one seed of one plotted point to its evaluation event and
// on to the train, tune and data tasks upstream.
func (a *auditor) trace(inputs map[[3]string][]pipeline.InputRef, r plot.Row, s plot.SeedRow, panelAxis string, rep *auditReport, xCoord string, yScale float64, detail bool) (*seedTrace, float64, error) {
	// In final mode each x is its own input task (its x coordinate).
	var in pipeline.InputRef
	ok := false
	for _, cand := range inputs[[3]string{r.Panel, r.Curve, strconv.FormatUint(s.Seed, 10)}] {
		if rep.Mode == plot.ModeFinal {
			xv, err := strconv.ParseFloat(coordsOf(cand.Task)[xCoord], 64)
			if err != nil || !plot.SameFloat(xv, r.X) {
				continue
			}
		}
		in, ok = cand, true
		break
	}
	if !ok {
		return nil, 0, fmt.Errorf("seed %d: no input of the plot task has these coordinates", s.Seed)
	}
	ev, err := a.produced(in.Task, in.Output)
	if err != nil {
		return nil, 0, err
	}
	its, err := a.iterations(ev)
	if err != nil {
		return nil, 0, err
	}
	var hit *task.Iter
	if rep.Mode == plot.ModeFinal {
		if len(its) > 0 {
			hit = &its[len(its)-1]
		}
	} else {
		for i := range its {
			if x, ok := valueOf(its[i], rep.X); ok && plot.SameFloat(x, r.X) {
				hit = &its[i]
				break
			}
		}
	}
	if hit == nil {
		return nil, 0, fmt.Errorf("seed %d: %s (run %d) recorded no event at %s = %s", s.Seed, in.Task, ev.Run, rep.X, task.FormatFloat(r.X))
	}
	y, ok := valueOf(*hit, rep.Y)
	if !ok {
		return nil, 0, fmt.Errorf("seed %d: %s's event at iteration %d has no %s", s.Seed, in.Task, hit.Iteration, rep.Y)
	}
	if rep.Mode == plot.ModeFinal {
		y *= yScale
	}
	tr := &seedTrace{Seed: s.Seed, Y: y, Event: hit}
	if !detail {
		return tr, y, nil
	}
	tr.Evaluate = infoOf(ev)
	for _, up := range ev.Inputs() {
		p, err := a.produced(up.Task, up.Output)
		if err != nil {
			return nil, 0, err
		}
		switch up.Slot {
		case "trained":
			tr.Train = infoOf(p)
			if err := a.traceTrain(tr, p, hit); err != nil {
				return nil, 0, err
			}
		case "data":
			tr.Data = infoOf(p)
		}
	}
	return tr, y, nil
}

func (a *auditor) traceTrain(tr *seedTrace, p *pipeline.Production, hit *task.Iter) error {
	its, err := a.iterations(p)
	if err != nil {
		return err
	}
	for i := range its {
		if its[i].Iteration == hit.Iteration {
			tr.TrainEvent = &its[i]
			break
		}
	}
	if raw, err := a.eng.ReadOutput(p.Output, "trajectory"); err == nil {
		var traj trajectory.Trajectory
		if err := traj.UnmarshalBinary(raw); err == nil {
			m := false
			for _, pt := range traj.Points {
				if pt.Iteration == hit.Iteration {
					m = pt.Samples == hit.Samples && trajectory.Digest(pt.Params) == hit.Digest
					break
				}
			}
			tr.Snapshot = &m
		}
	}
	for _, up := range p.Inputs() {
		switch up.Slot {
		case "hyper":
			ti, err := a.tune(up)
			if err != nil {
				return err
			}
			tr.Tune = ti
			v, ok := p.Param("use_tuned")
			tr.UsedTuned = !ok || v == "true"
		case "data":
			if tr.Data == nil {
				d, err := a.produced(up.Task, up.Output)
				if err != nil {
					return err
				}
				tr.Data = infoOf(d)
			}
		}
	}
	return nil
}

func (a *auditor) tune(up pipeline.InputRef) (*tuneInfo, error) {
	if t, ok := a.tunes[up.Output]; ok {
		return t, nil
	}
	p, err := a.produced(up.Task, up.Output)
	if err != nil {
		return nil, err
	}
	ti := &tuneInfo{taskInfo: infoOf(p)}
	if b, err := a.eng.ReadOutput(up.Output, "chosen.json"); err == nil {
		var v any
		if json.Unmarshal(b, &v) == nil {
			ti.Chosen, _ = json.Marshal(v)
		}
	}
	a.tunes[up.Output] = ti
	return ti, nil
}

// nearest keeps, per curve, the row whose x is closest to want.
func nearest(rows []plot.Row, want float64) []plot.Row {
	best := map[[2]string]int{}
	var order [][2]string
	for i, r := range rows {
		k := [2]string{r.Panel, r.Curve}
		j, ok := best[k]
		if !ok {
			order = append(order, k)
			best[k] = i
			continue
		}
		if math.Abs(r.X-want) < math.Abs(rows[j].X-want) {
			best[k] = i
		}
	}
	out := make([]plot.Row, 0, len(order))
	for _, k := range order {
		out = append(out, rows[best[k]])
	}
	return out
}

func describeCurves(rows []plot.Row) string {
	var seen []string
	for _, r := range rows {
		s := r.Curve
		if r.Panel != "" {
			s = r.Panel + "/" + r.Curve
		}
		if !slices.Contains(seen, s) {
			seen = append(seen, s)
		}
	}
	return strings.Join(seen, ", ")
}

func printAudit(w io.Writer, rep *auditReport, detail bool) {
	p := rep.Plot
	fmt.Fprintf(w, "figure %s (%s, entry %s)\n", rep.Figure, rep.ID, rep.Entry)
	fmt.Fprintf(w, "  plot task %s\n    action %s, output %s, computed in run %d\n    code %s\n", p.Task, p.Action, p.Output, p.Run, p.Code)
	platformShown = strings.Join(p.Platform, ", ")
	fmt.Fprintf(w, "    platform: %s (the same for every task below unless one says otherwise)\n", platformShown)
	fmt.Fprintf(w, "    plots %s against %s (%s mode) over %d inputs; band: %s\n", rep.Y, rep.X, rep.Mode, len(p.Inputs), rep.Band)
	fmt.Fprintf(w, "  every random stream is %s\n", stream.Derivation)
	if !detail {
		fmt.Fprintf(w, "  inputs (%d):\n", len(p.Inputs))
		for _, in := range p.Inputs {
			fmt.Fprintf(w, "    %s %s <- %s\n", in.Slot, in.Output, in.Task)
		}
	}
	for _, pt := range rep.Points {
		printPoint(w, rep, pt)
	}
	fmt.Fprintf(w, "%d of %d plotted points equal, bit for bit, the values recomputed from %d recorded events\n", rep.Equal, rep.Checked, rep.Events)
	if !detail {
		fmt.Fprintln(w, "(give --curve/--panel and --x for the chain behind one point)")
	}
}

func printPoint(w io.Writer, rep *auditReport, pt auditPoint) {
	where := "curve " + pt.Curve
	if pt.Panel != "" {
		where = "panel " + pt.Panel + ", " + where
	}
	fmt.Fprintf(w, "\npoint %s, %s = %s\n", where, rep.X, task.FormatFloat(pt.X))
	fmt.Fprintf(w, "  plotted:    mean %s, band [%s, %s], n = %d\n", task.FormatFloat(pt.Plotted.Mean), task.FormatFloat(pt.Plotted.Lo), task.FormatFloat(pt.Plotted.Hi), pt.Plotted.N)
	verdict := "equal bit for bit"
	if !pt.Equal {
		verdict = "DIFFERENT"
	}
	fmt.Fprintf(w, "  recomputed: mean %s, band [%s, %s], n = %d from the events below: %s\n", task.FormatFloat(pt.Recomputed.Mean), task.FormatFloat(pt.Recomputed.Lo), task.FormatFloat(pt.Recomputed.Hi), pt.Recomputed.N, verdict)
	for _, pr := range pt.Problems {
		fmt.Fprintf(w, "  problem: %s\n", pr)
	}
	for _, s := range pt.Seeds {
		fmt.Fprintf(w, "  seed %d: %s = %s\n", s.Seed, rep.Y, task.FormatFloat(s.Y))
		printTask(w, "evaluate", s.Evaluate)
		if s.Event != nil {
			fmt.Fprintf(w, "      event: iteration %d, samples %d, params digest %016x%s\n", s.Event.Iteration, s.Event.Samples, s.Event.Digest, metricsText(s.Event.Metrics))
		}
		if s.Train != nil {
			printTask(w, "train", s.Train)
			if s.TrainEvent != nil {
				fmt.Fprintf(w, "      event: iteration %d, samples consumed %d, params digest %016x%s\n", s.TrainEvent.Iteration, s.TrainEvent.Samples, s.TrainEvent.Digest, metricsText(s.TrainEvent.Metrics))
			}
			if s.Snapshot != nil {
				verdict := "its trajectory output holds the evaluated snapshot (iteration, samples and digest equal)"
				if !*s.Snapshot {
					verdict = "its trajectory output DOES NOT hold the evaluated snapshot"
				}
				fmt.Fprintf(w, "      %s\n", verdict)
			}
			if s.Tune != nil {
				how := "overrode the params above"
				if !s.UsedTuned {
					how = "connected but not used (use_tuned: false)"
				}
				fmt.Fprintf(w, "      hyperparameters: %s %s (%s)\n", s.Tune.Task, chosenText(s.Tune.Chosen), how)
				printTask(w, "tune", s.Tune.taskInfo)
			}
		}
		if s.Data != nil {
			printTask(w, "data", s.Data)
		}
	}
}

// platformShown is the platform printed in the header of an audit.
var platformShown string

func printTask(w io.Writer, role string, t *taskInfo) {
	if t == nil {
		return
	}
	fmt.Fprintf(w, "    %-8s %s\n", role, t.Task)
	runs := make([]string, len(t.Segments))
	for i, s := range t.Segments {
		runs[i] = strconv.FormatUint(s.Run, 10)
		if s.Resumed {
			runs[i] += fmt.Sprintf(" (resumed after iteration %d)", s.ResumedAt)
		}
	}
	fmt.Fprintf(w, "      action %s, output %s, run %s\n", t.Action, t.Output, strings.Join(runs, ", "))
	fmt.Fprintf(w, "      code %s\n", t.Code)
	if plat := strings.Join(t.Platform, ", "); plat != platformShown {
		fmt.Fprintf(w, "      platform: %s\n", plat)
	}
	if t.Seed != nil {
		fmt.Fprintf(w, "      seed %d\n", *t.Seed)
	}
	if len(t.Params) > 0 {
		fmt.Fprintf(w, "      params: %s\n", strings.Join(t.Params, "; "))
	}
	if t.Streams != nil {
		var fams []string
		for _, f := range t.Streams.Families {
			fams = append(fams, fmt.Sprintf("%s[%d indices] root %d scope %s", f.Name, f.Arity, f.Root, f.Scope))
		}
		fmt.Fprintf(w, "      streams: %s\n", strings.Join(fams, "; "))
	}
}

func metricsText(ms []task.Metric) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, ", %s %s", m.Name, task.FormatFloat(m.Value))
	}
	return b.String()
}

// chosenText summarises a tune task's chosen.json.
func chosenText(raw json.RawMessage) string {
	var ch struct {
		Params         map[string]any `json:"params"`
		Point          int            `json:"point"`
		Score          any            `json:"score"`
		ScoreName      string         `json:"score_name"`
		Seeds          []uint64       `json:"seeds"`
		ReferencePoint *int           `json:"reference_point"`
		ReferenceScore any            `json:"reference_score"`
	}
	if json.Unmarshal(raw, &ch) != nil {
		return string(raw)
	}
	params, _ := json.Marshal(ch.Params)
	out := fmt.Sprintf("chose grid point %d %s, mean %s %v over tuning seeds %v", ch.Point, params, ch.ScoreName, ch.Score, ch.Seeds)
	if ch.ReferencePoint != nil && *ch.ReferencePoint >= 0 {
		out += fmt.Sprintf("; the paper's choice is point %d (mean %v)", *ch.ReferencePoint, ch.ReferenceScore)
	}
	return out
}
