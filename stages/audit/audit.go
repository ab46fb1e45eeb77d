package audit

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"zorepro/pipeline/events"
	"zorepro/pipeline/provenance"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
	"zorepro/stages/plot"
	"zorepro/stages/plot/seedscsv"
	"zorepro/stages/tune/chosenjson"
)

// ErrSelection is returned by Figure for a selection (panel, curve, x)
// that matches nothing.
var ErrSelection = errors.New("audit: bad selection")

// Selection narrows an audit to one panel, one curve and the point nearest
// to one x ("" selects everything; X is given as its command-line text).
type Selection struct {
	Panel, Curve, X string
}

// New returns an Auditor of the runs recorded in rec, whose event log is
// log.
func New(rec *provenance.Record, log *events.Log) *Auditor {
	return &Auditor{rec: rec, log: log, prods: map[string]*provenance.Production{}, iters: map[string][]task.Iter{}, tunes: map[string]*TuneInfo{}}
}

// TaskInfo is one task of an audit chain as the event log records it.
type TaskInfo struct {
	Task     string                `json:"task"`
	Action   string                `json:"action"`
	Output   string                `json:"output"`
	Run      uint64                `json:"run"`
	Segments []provenance.Segment  `json:"segments"`
	Code     string                `json:"code"`
	Seed     *uint64               `json:"seed,omitempty"`
	Params   []string              `json:"params"`
	Streams  *provenance.Streams   `json:"streams,omitempty"`
	Inputs   []provenance.InputRef `json:"inputs,omitempty"`
	Platform []string              `json:"platform,omitempty"`
}

func infoOf(p *provenance.Production) *TaskInfo {
	ti := &TaskInfo{Task: p.Task, Action: p.Action, Output: p.Output, Run: p.Run, Segments: p.Segments,
		Code: p.Code(), Params: p.Params(), Streams: p.Streams, Inputs: p.Inputs()}
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

// TuneInfo is the tune task whose choice a train task used.
type TuneInfo struct {
	*TaskInfo
	Chosen *chosenjson.Chosen `json:"chosen"`
}

// SeedTrace is one seed's contribution to a plotted point.
type SeedTrace struct {
	Seed       uint64     `json:"seed"`
	Y          float64    `json:"y"`
	Evaluate   *TaskInfo  `json:"evaluate"`
	Event      *task.Iter `json:"event,omitempty"`
	Train      *TaskInfo  `json:"train,omitempty"`
	TrainEvent *task.Iter `json:"train_event,omitempty"`
	// Snapshot says whether the train task's output holds a snapshot at
	// the event's iteration whose digest is the evaluated one.
	Snapshot  *bool     `json:"snapshot_match,omitempty"`
	Tune      *TuneInfo `json:"tune,omitempty"`
	UsedTuned bool      `json:"used_tuned,omitempty"`
	Data      *TaskInfo `json:"data,omitempty"`
}

type Aggregate struct {
	Mean float64 `json:"mean"`
	Lo   float64 `json:"band_lo"`
	Hi   float64 `json:"band_hi"`
	N    int     `json:"n"`
}

// Point is one plotted point, recomputed from its events.
type Point struct {
	Panel      string      `json:"panel"`
	Curve      string      `json:"curve"`
	X          float64     `json:"x"`
	Plotted    Aggregate   `json:"plotted"`
	Recomputed Aggregate   `json:"recomputed"`
	Equal      bool        `json:"equal"`
	Problems   []string    `json:"problems,omitempty"`
	Seeds      []SeedTrace `json:"seeds,omitempty"`
}

type Report struct {
	Figure  string    `json:"figure"`
	ID      string    `json:"id"`
	Entry   string    `json:"entry"`
	Plot    *TaskInfo `json:"plot"`
	Band    string    `json:"band"`
	X, Y    string    `json:"-"`
	Mode    string    `json:"mode"`
	Points  []Point   `json:"points"`
	Checked int       `json:"points_checked"`
	Equal   int       `json:"points_equal"`
	Events  int       `json:"events_used"`
}

// Auditor resolves and caches the productions behind a figure while it
// audits it. Make one with New.
type Auditor struct {
	log   *events.Log
	rec   *provenance.Record
	prods map[string]*provenance.Production // by output ID
	iters map[string][]task.Iter            // by output ID
	tunes map[string]*TuneInfo
}

func (a *Auditor) produced(task, output string) (*provenance.Production, error) {
	if p, ok := a.prods[output]; ok {
		return p, nil
	}
	p, err := provenance.Produced(a.log, task, output)
	if err != nil {
		return nil, err
	}
	a.prods[output] = p
	return p, nil
}

func (a *Auditor) iterations(p *provenance.Production) ([]task.Iter, error) {
	if its, ok := a.iters[p.Output]; ok {
		return its, nil
	}
	its, err := p.Iterations(a.log)
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

// readTable reads the CSV file name of a plot task's recorded output and
// parses it, naming the file and task when it does not parse.
func readTable[T any](a *Auditor, pp *provenance.Production, name string, parse func([]byte) ([]T, error)) ([]T, error) {
	b, err := a.rec.ReadOutput(pp.Task, pp.Output, name)
	if err != nil {
		return nil, err
	}
	rows, err := parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s of %s: %w", name, pp.Task, err)
	}
	return rows, nil
}

// Figure recomputes every selected plotted point of the figure file ref
// (which src resolved) from the evaluate events behind it, in the figure's
// own seed order, and compares it with the plotted values; with sel.X it
// also traces each seed's chain. A selection that matches nothing is an
// ErrSelection error.
func (a *Auditor) Figure(ref string, src *provenance.FigureSource, sel Selection) (*Report, error) {
	pp := src.Production
	param := func(name, def string) string {
		if v, ok := pp.Param(name); ok {
			return v
		}
		return def
	}
	figure := param("figure", "")
	rep := &Report{Figure: ref, ID: src.ID.String(), Entry: src.Entry, Plot: infoOf(pp),
		Band: param("band", string(plot.BandMinMaxStd)), X: param("x", "samples"), Y: param("y", ""), Mode: param("mode", plot.ModeCurves)}
	rows, err := readTable(a, pp, figure+".csv", plot.ReadCurvesCSV)
	if err != nil {
		return nil, err
	}
	seedRows, err := readTable(a, pp, figure+"-seeds.csv", seedscsv.Parse)
	if err != nil {
		return nil, err
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
	picked := rows[:0:0]
	for _, r := range rows {
		if (sel.Curve == "" || r.Curve == sel.Curve) && (sel.Panel == "" || r.Panel == sel.Panel) {
			picked = append(picked, r)
		}
	}
	if len(picked) == 0 {
		return nil, fmt.Errorf("%w: %s has no curve %q in panel %q (it has %s)", ErrSelection, figure, sel.Curve, sel.Panel, describeCurves(rows))
	}
	if sel.X != "" {
		want, err := strconv.ParseFloat(sel.X, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: --x %q is not a number", ErrSelection, sel.X)
		}
		picked = nearest(picked, want)
	}
	detail := sel.X != ""

	inputs := map[[3]string][]provenance.InputRef{}
	for _, in := range pp.Inputs() {
		co := coordsOf(in.Task)
		k := [3]string{co[panelAxis], co[curveAxis], co["seed"]}
		inputs[k] = append(inputs[k], in)
	}
	pa := pointAuditor{a: a, rep: rep, inputs: inputs, seedRows: seedRows, panelAxis: panelAxis, xCoord: xCoord, yScale: yScale, floor: floor, detail: detail}
	for _, r := range picked {
		pt := pa.point(r)
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

// pointAuditor recomputes plotted points of one figure from its events.
type pointAuditor struct {
	a                 *Auditor
	rep               *Report
	inputs            map[[3]string][]provenance.InputRef
	seedRows          []seedscsv.Row
	panelAxis, xCoord string
	yScale            float64
	floor             *float64
	detail            bool
}

// point recomputes one plotted point (mean and band) from the evaluation
// events of its seeds, compared with the figure's per-seed table.
func (pa *pointAuditor) point(r plot.Row) Point {
	pt := Point{Panel: r.Panel, Curve: r.Curve, X: r.X, Plotted: Aggregate{r.Mean, r.Lo, r.Hi, r.N}}
	var ys []float64
	for _, s := range pa.seedRows {
		if s.Panel != r.Panel || s.Curve != r.Curve || !plot.SameFloat(s.X, r.X) {
			continue
		}
		tr, y, err := pa.a.trace(pa.inputs, r, s, pa.panelAxis, pa.rep, pa.xCoord, pa.yScale, pa.detail)
		if err != nil {
			pt.Problems = append(pt.Problems, err.Error())
			continue
		}
		if !plot.SameFloat(y, s.Y) {
			pt.Problems = append(pt.Problems, fmt.Sprintf("seed %d: the event gives %s, the figure's -seeds.csv %s", s.Seed, task.FormatFloat(y), task.FormatFloat(s.Y)))
		}
		ys = append(ys, y)
		pa.rep.Events++
		if pa.detail {
			pt.Seeds = append(pt.Seeds, *tr)
		}
	}
	mean, lo, hi, err := plot.PointOf(ys, plot.Band(pa.rep.Band), pa.floor)
	if err != nil {
		pt.Problems = append(pt.Problems, err.Error())
	}
	pt.Recomputed = Aggregate{mean, lo, hi, len(ys)}
	pt.Equal = len(pt.Problems) == 0 && len(ys) == r.N && plot.SameFloat(mean, r.Mean) && plot.SameFloat(lo, r.Lo) && plot.SameFloat(hi, r.Hi)
	return pt
}

// trace follows one seed of one plotted point to its evaluation event and
// on to the train, tune and data tasks upstream.
func (a *Auditor) trace(inputs map[[3]string][]provenance.InputRef, r plot.Row, s seedscsv.Row, panelAxis string, rep *Report, xCoord string, yScale float64, detail bool) (*SeedTrace, float64, error) {
	// In final mode each x is its own input task (its x coordinate).
	var in provenance.InputRef
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
	tr := &SeedTrace{Seed: s.Seed, Y: y, Event: hit}
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

func (a *Auditor) traceTrain(tr *SeedTrace, p *provenance.Production, hit *task.Iter) error {
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
	raw, err := a.rec.ReadOutput(p.Task, p.Output, "trajectory")
	if errors.Is(err, provenance.ErrDamaged) {
		return err
	}
	if err == nil {
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

func (a *Auditor) tune(up provenance.InputRef) (*TuneInfo, error) {
	if t, ok := a.tunes[up.Output]; ok {
		return t, nil
	}
	p, err := a.produced(up.Task, up.Output)
	if err != nil {
		return nil, err
	}
	ti := &TuneInfo{TaskInfo: infoOf(p)}
	b, err := a.rec.ReadOutput(up.Task, up.Output, "chosen.json")
	if errors.Is(err, provenance.ErrDamaged) {
		return nil, err
	}
	if err == nil {
		if ti.Chosen, err = chosenjson.Parse(b); err != nil {
			return nil, fmt.Errorf("%s chosen.json: %w", up.Task, err)
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
