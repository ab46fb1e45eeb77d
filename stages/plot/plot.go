package plot

import (
	"cmp"
	"context"
	"fmt"
	"image/color"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"zorepro/pipeline/task"
	"zorepro/stages/evaluate/curvecsv"
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
	columns                int // the most panels in a row (0: all in one)
	panelAxis, curveAxis   string
	panelTitle             string
	panelLabels            map[string]string // panel key → its text in panelTitle
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
	shareY                 bool   // one y range for every panel
	companionLogY          bool   // also a companion figure on a log y axis
	capLabel               string // final mode: label of the line at converged_below ("" for none)
	ratio                  *ratioView
	bounds                 []curveBound    // reference curves drawn beside a curve
	companionConverged     bool            // final mode: also <figure>-converged-view.png/svg
	crossover              *crossoverViews // final mode: the crossover experiment's difference and scaling views
}

// curveBound is an upper bound on a curve drawn beside it, dashed:
// Coef·(panel + PanelAdd)^PanelPow·x^XPow (the form of the report's bound
// claims, e.g. Theorem 1's average regret), at the curve's x in each panel.
type curveBound struct {
	curve, label                   string
	coef, panelAdd, panelPow, xPow float64
}

// at is the bound at x in the panel whose key is k.
func (b curveBound) at(x, k float64) float64 {
	return b.coef * math.Pow(k+b.panelAdd, b.panelPow) * math.Pow(x, b.xPow)
}

// sciText writes x for a label: "10⁶", "2·10⁴", or plain below 1000.
func sciText(x float64) string {
	if math.Abs(x) < 1000 || x != math.Trunc(x) {
		return task.FormatFloat(x)
	}
	k := int(math.Floor(math.Log10(math.Abs(x))))
	m := x / math.Pow(10, float64(k))
	sup := superscript(strconv.Itoa(k))
	if m == 1 {
		return "10" + sup
	}
	return task.FormatFloat(m) + "·10" + sup
}

// sharedRange is the y range of every curve's mean and band, over all
// panels (positive values only on a log axis).
func sharedRange(curves []Curve, logY bool) (*float64, *float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range curves {
		for _, ys := range [][]float64{c.Mean, c.Lo, c.Hi} {
			for _, y := range ys {
				if !math.IsNaN(y) && !math.IsInf(y, 0) && (!logY || y > 0) {
					lo, hi = min(lo, y), max(hi, y)
				}
			}
		}
	}
	if lo > hi {
		return nil, nil
	}
	return &lo, &hi
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
	// columns: the most panels in a row (0: all in one).
	r.columns = int(p.Int("columns", task.Default(0), task.Min(0)))
	r.panelAxis = p.String("panel", task.Default(""))
	r.panelTitle = p.String("panel_title", task.Default("%s"))
	if p.Has("panels") {
		r.panels = p.Strings("panels", task.NonEmpty())
	}
	// panel_labels: a panel key's text in panel_title (default: the key).
	r.panelLabels = map[string]string{}
	if pl, ok := p.Sub("panel_labels"); ok {
		for _, k := range pl.Keys() {
			r.panelLabels[k] = pl.String(k)
		}
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
	// share_y: one y range for every panel (the data's, over all of them),
	// so that panels compare at a glance.
	r.shareY = p.Bool("share_y", task.Default(false))
	// companion_log_y: also <figure>-logy.png/svg, the same numbers on a
	// log y axis.
	r.companionLogY = p.Bool("companion_log_y", task.Default(false))
	// companion_ratio: also <figure>-ratio-view.png/svg/csv, one curve's
	// mean over another's per panel and x.
	if c, ok := p.Sub("companion_ratio"); ok {
		r.ratio = &ratioView{num: c.String("num", task.Required()), den: c.String("den", task.Required()), label: c.String("label", task.Required())}
	}
	if in, ok := p.Sub("inset"); ok {
		r.inset = &InsetSpec{XMin: in.Float("x_min", task.Required()), XMax: in.Float("x_max", task.Required()),
			YMin: in.Float("y_min", task.Required()), YMax: in.Float("y_max", task.Required())}
	}
	// bounds: per curve, an upper bound drawn beside it (label, and bound:
	// coef, panel_add, panel_pow, x_pow, as a report bound claim has it).
	if bs, ok := p.Sub("bounds"); ok {
		for _, c := range bs.Keys() {
			e, _ := bs.Sub(c)
			if !slices.Contains(r.curves, c) {
				bs.Errorf(c, "not one of the curves %v", r.curves)
				continue
			}
			b := curveBound{curve: c, label: e.String("label", task.Required())}
			if f, ok := e.Sub("bound", task.Required()); ok {
				b.coef = f.Float("coef", task.Required(), task.Above(0))
				b.panelAdd = f.Float("panel_add", task.Default(0.0))
				b.panelPow = f.Float("panel_pow", task.Default(0.0))
				b.xPow = f.Float("x_pow", task.Default(0.0))
			}
			r.bounds = append(r.bounds, b)
		}
	}
	r.mode = p.String("mode", task.Default(ModeCurves), task.OneOf(ModeCurves, ModeFinal))
	if r.mode == ModeFinal {
		r.xCoord = p.String("x_coord", task.Required())
		r.yScale = p.Float("y_scale", task.Default(1.0), task.Above(0))
		r.convergedBelow = opt("converged_below")
		// cap_label: the label of a dashed line at converged_below, the
		// budget runs stop at, "%s" standing for that budget ("" for no line).
		r.capLabel = p.String("cap_label", task.Default(""))
		r.fit = p.Bool("fit_loglog", task.Default(false))
		// companion_converged: also <figure>-converged-view.png/svg, the
		// fraction of seeds below converged_below at each x.
		r.companionConverged = p.Bool("companion_converged", task.Default(false))
		if r.companionConverged && r.convergedBelow == nil {
			p.Errorf("companion_converged", "needs converged_below, the budget runs stop at")
		}
		// companion_crossover: also <figure>-difference-view.png/svg/csv
		// and <figure>-scaling-view.png/svg with <figure>-scaling.csv
		// (crossover.go).
		r.crossover = decodeCrossoverViews(p, r.curves)
	}
	return r
}

func (r *runner) Components() []any { return nil }

// ExportFigures marks the outputs as figure files to export.
func (r *runner) ExportFigures() bool { return true }

func (r *runner) Run(ctx context.Context, env task.Env) error {
	series, finals, panelOrder, err := r.collect(env)
	if err != nil {
		return err
	}
	curves, err := AggregateWith(series, AggregateOptions{Band: r.band, LoFloor: r.loFloor})
	if err != nil {
		return err
	}
	spec := r.spec(curves, panelOrder)
	png, svg, err := Render(spec, curves)
	if err != nil {
		return err
	}
	outputs := []output{
		{r.figure + ".png", png}, {r.figure + ".svg", svg},
		{r.figure + ".csv", CurvesCSV(curves)}, {r.figure + "-seeds.csv", SeedsCSV(series)},
	}
	if r.companionLogY {
		png, svg, err := Render(logCompanion(spec, curves), curves)
		if err != nil {
			return err
		}
		outputs = append(outputs, output{r.figure + "-logy.png", png}, output{r.figure + "-logy.svg", svg})
	}
	if r.ratio != nil {
		more, err := r.ratio.outputs(r.figure, spec, curves, series)
		if err != nil {
			return err
		}
		outputs = append(outputs, more...)
	}
	if r.mode == ModeFinal && r.convergedBelow != nil {
		outputs = append(outputs, output{r.figure + "-converged.csv", convergedCSV(finals, *r.convergedBelow, panelOrder, r.curves)})
		if r.companionConverged {
			vs, vc := convergedView(spec, finals, *r.convergedBelow, panelOrder, r.curves, sciText(*r.convergedBelow)+" samples")
			png, svg, err := Render(vs, vc)
			if err != nil {
				return err
			}
			outputs = append(outputs, output{r.figure + "-converged-view.png", png}, output{r.figure + "-converged-view.svg", svg})
		}
	}
	if r.mode == ModeFinal && r.crossover != nil {
		more, err := r.crossover.outputs(r.figure, spec, series, panelOrder)
		if err != nil {
			return err
		}
		outputs = append(outputs, more...)
	}
	if r.mode == ModeFinal && r.fit {
		outputs = append(outputs, output{r.figure + "-fit.csv", FitCSV(series)}, output{r.figure + "-ratio.csv", RatioCSV(series, panelOrder, r.curves)})
	}
	for _, o := range outputs {
		if err := env.Output(o.name, o.data); err != nil {
			return err
		}
	}
	return nil
}

// output is one file a plot task publishes.
type output struct {
	name string
	data []byte
}

// collect reads the inputs' curves: each seed's series in (panel order,
// curve order, input order), so that aggregation and the CSVs list panels
// and curves as the figure does; in final mode also each input's final
// value.
func (r *runner) collect(env task.Env) ([]Series, []final, []string, error) {
	var series []Series
	panelSeen := map[string]bool{}
	var panelOrder []string
	var finals []final
	for _, in := range env.Inputs("curves") {
		panel, curve, seed, x, y, err := r.readInput(in)
		if err != nil {
			return nil, nil, nil, err
		}
		if !slices.Contains(r.curves, curve) {
			continue
		}
		if !panelSeen[panel] {
			panelSeen[panel] = true
			panelOrder = append(panelOrder, panel)
		}
		if r.mode == ModeFinal {
			xv, ok := in.Coord(r.xCoord)
			xf, err := strconv.ParseFloat(xv, 64)
			if !ok || err != nil || len(y) == 0 {
				return nil, nil, nil, fmt.Errorf("input %s: no numeric %q coordinate or no rows", in.Task(), r.xCoord)
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
		series = append(series, Series{Panel: panel, Curve: curve, Seed: seed, X: x, Y: y})
	}
	if len(r.panels) > 0 {
		panelOrder = r.panels
	}
	if r.mode == ModeFinal {
		series = r.finalSeries(finals)
	}
	rank := func(list []string, v string) int { return slices.Index(list, v) }
	slices.SortStableFunc(series, func(a, b Series) int {
		if d := rank(panelOrder, a.Panel) - rank(panelOrder, b.Panel); d != 0 {
			return d
		}
		return rank(r.curves, a.Curve) - rank(r.curves, b.Curve)
	})
	return series, finals, panelOrder, nil
}

// readInput reads one input's panel and curve keys, seed and curve
// columns (curves not plotted are read too: their keys say so).
func (r *runner) readInput(in task.Input) (panel, curve string, seed uint64, x, y []float64, err error) {
	if r.panelAxis != "" {
		v, ok := in.Coord(r.panelAxis)
		if !ok {
			return "", "", 0, nil, nil, fmt.Errorf("input %s has no %q coordinate", in.Task(), r.panelAxis)
		}
		panel = v
	}
	curve, ok := in.Coord(r.curveAxis)
	if !ok {
		return "", "", 0, nil, nil, fmt.Errorf("input %s has no %q coordinate", in.Task(), r.curveAxis)
	}
	if !slices.Contains(r.curves, curve) {
		return panel, curve, 0, nil, nil, nil
	}
	seedText, _ := in.Coord("seed")
	seed, _ = strconv.ParseUint(seedText, 10, 64)
	data, err := in.Read("curve.csv")
	if err != nil {
		return "", "", 0, nil, nil, err
	}
	cv, err := curvecsv.Parse(data)
	if err == nil {
		if x, err = cv.Column(r.x); err == nil {
			y, err = cv.Column(r.y)
		}
	}
	if err != nil {
		return "", "", 0, nil, nil, fmt.Errorf("%s curve.csv: %w", in.Task(), err)
	}
	return panel, curve, seed, x, y, nil
}

// spec lays out the figure: its panels (one y range for all with
// share_y; the cap line in final mode), curves and caption.
func (r *runner) spec(curves []Curve, panelOrder []string) Spec {
	nSeeds := 0
	for _, c := range curves {
		nSeeds = max(nSeeds, c.N)
	}
	spec := Spec{Title: r.title, Inset: r.inset, Columns: r.columns}
	yMin, yMax := r.yMin, r.yMax
	if r.shareY && yMin == nil && yMax == nil {
		yMin, yMax = sharedRange(curves, r.logY)
	}
	var hlines []HLine
	if r.mode == ModeFinal && r.convergedBelow != nil && r.capLabel != "" {
		hlines = append(hlines, HLine{Y: *r.convergedBelow * r.yScale, Label: strings.ReplaceAll(r.capLabel, "%s", sciText(*r.convergedBelow))})
	}
	for _, pk := range panelOrder {
		title := ""
		if r.panelAxis != "" {
			title = strings.ReplaceAll(r.panelTitle, "%s", cmp.Or(r.panelLabels[pk], pk))
		}
		spec.Panels = append(spec.Panels, PanelSpec{Key: pk, Title: title, XLabel: r.xLabel, YLabel: r.yLabel, LogX: r.logX, LogY: r.logY, XMin: r.xMin, XMax: r.xMax, YMin: yMin, YMax: yMax, HLines: hlines,
			Guides: r.guides(curves, pk)})
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
	return spec
}

// guides are the bounds drawn in panel pk, each at its curve's x there, in
// its curve's colour (a panel key that is not a number draws none of the
// bounds that depend on it).
func (r *runner) guides(curves []Curve, pk string) []Guide {
	var out []Guide
	for _, b := range r.bounds {
		k, err := strconv.ParseFloat(pk, 64)
		if err != nil && b.panelPow != 0 {
			continue
		}
		for _, c := range curves {
			if c.Panel != pk || c.Curve != b.curve {
				continue
			}
			g := Guide{Label: b.label, Color: Colors[cmp.Or(r.colors[b.curve], "black")], X: slices.Clone(c.X)}
			for _, x := range c.X {
				g.Y = append(g.Y, b.at(x, k))
			}
			out = append(out, g)
		}
	}
	return out
}

// logCompanion is the same figure on a log y axis: a companion view of
// values the paper's linear axis squeezes together (Fig. 2's final losses,
// all near the noise floor), not a figure of the paper. Each panel's axis
// starts one decade below its lowest mean: a band's lower edge (the
// smallest seed's value, with min-max bands) would otherwise stretch it
// over many decades (Newton's at d = 10 reached 10^-17) and squeeze the
// curves; bands are cut there.
func logCompanion(s Spec, curves []Curve) Spec {
	c := s
	c.Title = s.Title + " (log y)"
	c.Caption = "A companion view of the same numbers on a log y axis, not the paper's axis; a panel's axis starts at most one decade below its lowest mean, and bands reaching lower are cut there. " + s.Caption
	c.Panels = slices.Clone(s.Panels)
	for i := range c.Panels {
		c.Panels[i].LogY, c.Panels[i].YMin, c.Panels[i].YMax = true, nil, nil
		lo, bandLo := math.Inf(1), math.Inf(1)
		for _, cv := range curves {
			if cv.Panel != c.Panels[i].Key {
				continue
			}
			for j, m := range cv.Mean {
				if m > 0 {
					lo = min(lo, m)
				}
				if cv.Lo[j] > 0 {
					bandLo = min(bandLo, cv.Lo[j])
				}
			}
		}
		if floor := lo / 10; !math.IsInf(lo, 1) && bandLo < floor {
			c.Panels[i].YMin = &floor
		}
	}
	c.Inset = nil
	return c
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
	groups := firstSeen[key]{}
	var out []Series
	for _, f := range fs {
		i, first := groups.index(key{f.panel, f.curve, f.seed})
		if first {
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
