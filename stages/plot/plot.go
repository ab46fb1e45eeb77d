package plot

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"image/color"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"zorepro/pipeline/task"
)

// Kind is the plot stage kind: it reads the learning curves of its
// "curves" inputs (evaluate tasks), groups them into panels and curves by
// two matrix coordinates, aggregates across the "seed" coordinate and
// writes <figure>.png, <figure>.svg, <figure>.csv (the plotted curves) and
// <figure>-seeds.csv (every seed's points).
type Kind struct{}

// Name implements task.Kind.
func (k *Kind) Name() string { return "plot" }

// Version implements task.Kind.
func (k *Kind) Version() int { return 1 }

// Slots implements task.Kind.
func (k *Kind) Slots() []task.Slot {
	return []task.Slot{{Name: "curves", Required: true, Many: true}}
}

var figureRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// Colors are the colour names dag.yaml may use.
var Colors = map[string]color.Color{
	"red":     color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	"blue":    color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"green":   color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	"black":   color.RGBA{A: 0xff},
	"magenta": color.RGBA{R: 0xc0, G: 0x1c, B: 0xc0, A: 0xff},
	"orange":  color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	"purple":  color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	"gray":    color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff},
}

type runner struct {
	figure                 string
	panelAxis, curveAxis   string
	panelTitle             string
	panels                 []string
	curves                 []string
	labels, colors         map[string]string
	x, y                   string
	xLabel, yLabel, title  string
	logX, logY             bool
	xMin, xMax, yMin, yMax *float64
	band                   Band
	caption                string
	loFloor                *float64
	mode                   string   // "curves" or "final"
	xCoord                 string   // final mode: the coordinate giving x
	yScale                 float64  // final mode: y is multiplied by this
	convergedBelow         *float64 // final mode: a seed converged when its raw y is below this
	fit                    bool     // final mode: also write <figure>-fit.csv and <figure>-ratio.csv
	inset                  *InsetSpec
}

// Plot modes.
const (
	// ModeCurves plots each input's learning curve (x and y columns).
	ModeCurves = "curves"
	// ModeFinal plots one point per input: x is a coordinate of the input
	// (e.g. the noise level), y the last value of the y column (e.g. the
	// samples used), so seeds are aggregated per coordinate value.
	ModeFinal = "final"
)

// Plan implements task.Kind.
func (k *Kind) Plan(p *task.Params) task.Runner {
	r := &runner{labels: map[string]string{}, colors: map[string]string{}}
	r.figure = p.String("figure", task.Required())
	if r.figure != "" && !figureRE.MatchString(r.figure) {
		p.Errorf("figure", "%q must match %s (it names the exported files)", r.figure, figureRE)
	}
	r.title = p.String("title", task.Default(""))
	r.panelAxis = p.String("panel", task.Default(""))
	r.panelTitle = p.String("panel_title", task.Default("%s"))
	if p.Has("panels") {
		r.panels = p.Strings("panels", task.NonEmpty())
	}
	r.curveAxis = p.String("curve", task.Required())
	r.curves = p.Strings("curves", task.Required(), task.NonEmpty())
	if labels, ok := p.Sub("labels"); ok {
		for _, c := range r.curves {
			if labels.Has(c) {
				r.labels[c] = labels.String(c)
			}
		}
	}
	if colors, ok := p.Sub("colors"); ok {
		for _, c := range r.curves {
			if colors.Has(c) {
				r.colors[c] = colors.String(c, task.OneOf(slices.Sorted(maps.Keys(Colors))...))
			}
		}
	}
	r.x = p.String("x", task.Default("samples"))
	r.y = p.String("y", task.Required())
	r.xLabel = p.String("x_label", task.Default(r.x))
	r.yLabel = p.String("y_label", task.Default(r.y))
	r.logX = p.Bool("log_x", task.Default(false))
	r.logY = p.Bool("log_y", task.Default(false))
	opt := func(name string) *float64 {
		if !p.Has(name) {
			return nil
		}
		v := p.Float(name)
		return &v
	}
	r.xMin, r.xMax, r.yMin, r.yMax = opt("x_min"), opt("x_max"), opt("y_min"), opt("y_max")
	r.loFloor = opt("band_floor")
	r.band = Band(p.String("band", task.Default(string(BandMinMaxStd)), task.OneOf(string(BandMinMaxStd), string(BandStdErr))))
	r.caption = p.String("caption", task.Default(""))
	if in, ok := p.Sub("inset"); ok {
		r.inset = &InsetSpec{XMin: in.Float("x_min", task.Required()), XMax: in.Float("x_max", task.Required()),
			YMin: in.Float("y_min", task.Required()), YMax: in.Float("y_max", task.Required())}
	}
	r.mode = p.String("mode", task.Default(ModeCurves), task.OneOf(ModeCurves, ModeFinal))
	if r.mode == ModeFinal {
		r.xCoord = p.String("x_coord", task.Required())
		r.yScale = p.Float("y_scale", task.Default(1.0), task.Above(0))
		r.convergedBelow = opt("converged_below")
		r.fit = p.Bool("fit_loglog", task.Default(false))
	}
	return r
}

func (r *runner) Components() []any { return nil }

// ExportFigures marks the outputs as figure files to export.
func (r *runner) ExportFigures() bool { return true }

func (r *runner) Run(ctx context.Context, env task.Env) error {
	var series []Series
	panelSeen := map[string]bool{}
	var panelOrder []string
	var finals []final
	for _, in := range env.Inputs("curves") {
		panel := ""
		if r.panelAxis != "" {
			v, ok := in.Coord(r.panelAxis)
			if !ok {
				return fmt.Errorf("input %s has no %q coordinate", in.Task(), r.panelAxis)
			}
			panel = v
		}
		curve, ok := in.Coord(r.curveAxis)
		if !ok {
			return fmt.Errorf("input %s has no %q coordinate", in.Task(), r.curveAxis)
		}
		if !slices.Contains(r.curves, curve) {
			continue
		}
		seedText, _ := in.Coord("seed")
		seed, _ := strconv.ParseUint(seedText, 10, 64)
		data, err := in.Read("curve.csv")
		if err != nil {
			return err
		}
		x, y, err := columns(data, r.x, r.y)
		if err != nil {
			return fmt.Errorf("%s curve.csv: %w", in.Task(), err)
		}
		if r.mode == ModeFinal {
			xv, ok := in.Coord(r.xCoord)
			xf, err := strconv.ParseFloat(xv, 64)
			if !ok || err != nil || len(y) == 0 {
				return fmt.Errorf("input %s: no numeric %q coordinate or no rows", in.Task(), r.xCoord)
			}
			if !panelSeen[panel] {
				panelSeen[panel] = true
				panelOrder = append(panelOrder, panel)
			}
			finals = append(finals, final{panel: panel, curve: curve, seed: seed, x: xf, raw: y[len(y)-1]})
			continue
		}
		if r.xMax != nil {
			n := 0
			for n < len(x) && x[n] <= *r.xMax {
				n++
			}
			x, y = x[:n], y[:n]
		}
		if !panelSeen[panel] {
			panelSeen[panel] = true
			panelOrder = append(panelOrder, panel)
		}
		series = append(series, Series{Panel: panel, Curve: curve, Seed: seed, X: x, Y: y})
	}
	if len(r.panels) > 0 {
		panelOrder = r.panels
	}
	if r.mode == ModeFinal {
		series = r.finalSeries(finals)
	}
	// Series in (panel order, curve order, input order) so aggregation and
	// the CSVs list panels and curves as the figure does.
	rank := func(list []string, v string) int { return slices.Index(list, v) }
	slices.SortStableFunc(series, func(a, b Series) int {
		if d := rank(panelOrder, a.Panel) - rank(panelOrder, b.Panel); d != 0 {
			return d
		}
		return rank(r.curves, a.Curve) - rank(r.curves, b.Curve)
	})
	curves, err := AggregateWith(series, AggregateOptions{Band: r.band, LoFloor: r.loFloor})
	if err != nil {
		return err
	}
	nSeeds := 0
	for _, c := range curves {
		nSeeds = max(nSeeds, c.N)
	}
	spec := Spec{Title: r.title, Inset: r.inset}
	for _, pk := range panelOrder {
		title := ""
		if r.panelAxis != "" {
			title = strings.ReplaceAll(r.panelTitle, "%s", pk)
		}
		spec.Panels = append(spec.Panels, PanelSpec{Key: pk, Title: title, XLabel: r.xLabel, YLabel: r.yLabel, LogX: r.logX, LogY: r.logY, XMin: r.xMin, XMax: r.xMax, YMin: r.yMin, YMax: r.yMax})
	}
	for _, c := range r.curves {
		label := r.labels[c]
		if label == "" {
			label = c
		}
		col := Colors[r.colors[c]]
		if col == nil {
			col = Colors["black"]
		}
		spec.Curves = append(spec.Curves, CurveStyle{Key: c, Label: label, Color: col})
	}
	spec.Caption = strings.TrimSpace(r.caption + " Lines: mean across seeds; " + r.band.Caption(nSeeds) + ".")
	png, svg, err := Render(spec, curves)
	if err != nil {
		return err
	}
	outputs := []struct {
		name string
		data []byte
	}{
		{r.figure + ".png", png}, {r.figure + ".svg", svg},
		{r.figure + ".csv", CurvesCSV(curves)}, {r.figure + "-seeds.csv", SeedsCSV(series)},
	}
	if r.mode == ModeFinal && r.convergedBelow != nil {
		outputs = append(outputs, struct {
			name string
			data []byte
		}{r.figure + "-converged.csv", convergedCSV(finals, *r.convergedBelow, panelOrder, r.curves)})
	}
	if r.mode == ModeFinal && r.fit {
		outputs = append(outputs, struct {
			name string
			data []byte
		}{r.figure + "-fit.csv", FitCSV(series)}, struct {
			name string
			data []byte
		}{r.figure + "-ratio.csv", RatioCSV(series, panelOrder, r.curves)})
	}
	for _, o := range outputs {
		if err := env.Output(o.name, o.data); err != nil {
			return err
		}
	}
	return nil
}

// final is one input's last value in final mode.
type final struct {
	panel, curve string
	seed         uint64
	x, raw       float64
}

// finalSeries turns final points into one series per (panel, curve, seed)
// over increasing x, in order of first appearance.
func (r *runner) finalSeries(fs []final) []Series {
	type key struct {
		panel, curve string
		seed         uint64
	}
	idx := map[key]int{}
	var out []Series
	for _, f := range fs {
		k := key{f.panel, f.curve, f.seed}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Series{Panel: f.panel, Curve: f.curve, Seed: f.seed})
		}
		out[i].X = append(out[i].X, f.x)
		out[i].Y = append(out[i].Y, f.raw*r.yScale)
	}
	for i := range out {
		s := &out[i]
		order := make([]int, len(s.X))
		for j := range order {
			order[j] = j
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmpFloat(s.X[a], s.X[b]) })
		x, y := make([]float64, len(order)), make([]float64, len(order))
		for j, o := range order {
			x[j], y[j] = s.X[o], s.Y[o]
		}
		s.X, s.Y = x, y
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// convergedCSV counts, per panel, curve and x, the seeds whose raw final
// value is below the threshold: panel,curve,x,converged,n_seeds,fraction.
func convergedCSV(fs []final, below float64, panels, curves []string) []byte {
	type key struct {
		panel, curve string
		x            float64
	}
	type count struct{ ok, n int }
	counts := map[key]*count{}
	var keys []key
	for _, f := range fs {
		k := key{f.panel, f.curve, f.x}
		c, seen := counts[k]
		if !seen {
			c = &count{}
			counts[k] = c
			keys = append(keys, k)
		}
		c.n++
		if f.raw < below {
			c.ok++
		}
	}
	slices.SortStableFunc(keys, func(a, b key) int {
		if d := slices.Index(panels, a.panel) - slices.Index(panels, b.panel); d != 0 {
			return d
		}
		if d := slices.Index(curves, a.curve) - slices.Index(curves, b.curve); d != 0 {
			return d
		}
		return cmpFloat(a.x, b.x)
	})
	var b bytes.Buffer
	b.WriteString("panel,curve,x,converged,n_seeds,fraction\n")
	for _, k := range keys {
		c := counts[k]
		fmt.Fprintf(&b, "%s,%s,%s,%d,%d,%s\n", k.panel, k.curve, task.FormatFloat(k.x), c.ok, c.n, task.FormatFloat(float64(c.ok)/float64(c.n)))
	}
	return b.Bytes()
}

// columns extracts two named columns of a curve CSV.
func columns(data []byte, xName, yName string) (x, y []float64, err error) {
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return nil, nil, err
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("empty")
	}
	xi, yi := slices.Index(rows[0], xName), slices.Index(rows[0], yName)
	if xi < 0 || yi < 0 {
		return nil, nil, fmt.Errorf("columns %q and %q not both in header %v", xName, yName, rows[0])
	}
	for i, row := range rows[1:] {
		xv, err1 := strconv.ParseFloat(row[xi], 64)
		yv, err2 := strconv.ParseFloat(row[yi], 64)
		if err1 != nil || err2 != nil {
			return nil, nil, fmt.Errorf("row %d: not numbers: %v", i+2, row)
		}
		x, y = append(x, xv), append(y, yv)
	}
	return x, y, nil
}
