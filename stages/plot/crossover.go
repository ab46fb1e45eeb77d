package plot

import (
	"fmt"
	"image/color"
	"math"
	"regexp"
	"slices"
	"strings"

	"zorepro/pipeline/task"
	"zorepro/stages/plot/crossing"
	"zorepro/stages/plot/seedscsv"
)

// crossoverViews are the crossover experiment's companion figures (issue
// 44), from a final-value figure whose panels are bodies and whose x is
// the horizon:
//
//   - <figure>-difference-view: per body, the leader's per-seed value
//     minus each rival's against H, the mean with its 95% paired t
//     interval, and the line of parity;
//   - <figure>-scaling-view (with panel_x): each body's crossover horizon against its
//     value on a log-log axis (d/p), the bracket the report's scaling
//     claims judge (crossing.Analyze on the same per-seed numbers) with
//     the point where the mean advantage turns positive, and the line of
//     the theory's slope through the points. A body whose premise
//     (ratio_within, as the scaling claims declare it) does not hold has
//     no bar; the caption says why.
type crossoverViews struct {
	leader  string
	rivals  []string // the difference view's
	scaling []string // the scaling view's rivals (the theory's: ExAct)
	panelX  map[string]float64
	xLabel  string
	slope   float64
	premise crossing.Premise
}

// decodeCrossoverViews reads params.companion_crossover.
func decodeCrossoverViews(p *task.Params, curves []string) *crossoverViews {
	c, ok := p.Sub("companion_crossover")
	if !ok {
		return nil
	}
	v := &crossoverViews{leader: c.String("leader", task.Required()), rivals: c.Strings("rivals", task.Required(), task.NonEmpty()),
		xLabel: c.String("x_label", task.Default("")), slope: c.Float("slope", task.Default(0.5))}
	v.scaling = c.Strings("scaling_rivals", task.Default(v.rivals), task.NonEmpty())
	for _, f := range []struct {
		field string
		keys  []string
	}{{"leader", []string{v.leader}}, {"rivals", v.rivals}, {"scaling_rivals", v.scaling}} {
		for _, k := range f.keys {
			if !slices.Contains(curves, k) {
				c.Errorf(f.field, "%q is not one of the curves %v", k, curves)
			}
		}
	}
	// panel_x (each panel's d/p) asks for the scaling view too; without
	// it, the difference view alone.
	if px, ok := c.Sub("panel_x"); ok {
		if v.xLabel == "" {
			c.Errorf("x_label", "missing: the scaling view's x axis (e.g. d/p) needs its label")
		}
		v.panelX = map[string]float64{}
		for _, k := range px.Keys() {
			if v.panelX[k] = px.Float(k, task.Required()); !(v.panelX[k] > 0) {
				px.Errorf(k, "must be positive (a log-log axis), got %v", v.panelX[k])
			}
		}
	}
	if c.Has("ratio_within") {
		switch w := c.Floats("ratio_within", task.Required()); {
		case len(w) == 2 && w[0] < w[1]:
			v.premise = crossing.Premise{Lo: w[0], Hi: w[1]}
		default:
			c.Errorf("ratio_within", "must be [lo, hi] with lo < hi")
		}
	}
	return v
}

// outputs renders both views.
func (v *crossoverViews) outputs(figure string, s Spec, series []Series, panels []string) ([]output, error) {
	rs := rows(series)
	var out []output
	ds, dc, err := v.differenceView(s, rs, panels)
	if err != nil {
		return nil, err
	}
	png, svg, err := Render(ds, dc)
	if err != nil {
		return nil, err
	}
	out = append(out, output{figure + "-difference-view.png", png}, output{figure + "-difference-view.svg", svg}, output{figure + "-difference-view.csv", CurvesCSV(dc)})
	if v.panelX == nil {
		return out, nil
	}
	ss, sc, table, err := v.scalingView(s, rs, panels)
	if err != nil {
		return nil, err
	}
	if png, svg, err = Render(ss, sc); err != nil {
		return nil, err
	}
	return append(out, output{figure + "-scaling-view.png", png}, output{figure + "-scaling-view.svg", svg}, output{figure + "-scaling.csv", table}), nil
}

// differenceView is, per body, the leader minus each rival at every H:
// the mean paired difference and its 95% paired t interval.
func (v *crossoverViews) differenceView(s Spec, rs []seedscsv.Row, panels []string) (Spec, []Curve, error) {
	var cs []Curve
	for _, panel := range panels {
		for _, rival := range v.rivals {
			keys, err := crossing.Keys(rs, panel, []string{v.leader, rival})
			if err != nil {
				return Spec{}, nil, fmt.Errorf("companion_crossover: %w", err)
			}
			c := Curve{Panel: panel, Curve: rival}
			for _, k := range keys {
				m, lo, hi := crossing.PairedT(k.Leader, k.Rivals[0], 0.05)
				c.X, c.Mean, c.Lo, c.Hi = append(c.X, k.At), append(c.Mean, m), append(c.Lo, lo), append(c.Hi, hi)
				c.N = max(c.N, len(k.Leader))
			}
			cs = append(cs, c)
		}
	}
	d := s
	lead := styleLabel(s, v.leader)
	d.Title = lead + " minus each rival, per seed"
	d.Caption = fmt.Sprintf("A companion view of the same runs: %s's final mean return minus each rival's, seed by seed (the rivals share the seeds), against H; band: the 95%% paired t interval of the mean difference at each H (pointwise). Above 0, %s is ahead. Not a figure of the paper.", lead, lead)
	d.Curves = nil
	for _, st := range s.Curves {
		if slices.Contains(v.rivals, st.Key) {
			st.Label = lead + " − " + st.Label
			d.Curves = append(d.Curves, st)
		}
	}
	d.Panels = slices.Clone(s.Panels)
	for i := range d.Panels {
		d.Panels[i].YLabel = "Difference in mean return"
		d.Panels[i].LogY, d.Panels[i].YMin, d.Panels[i].YMax, d.Panels[i].Guides = false, nil, nil, nil
		d.Panels[i].HLines = []HLine{{Y: 0, Label: "parity"}}
	}
	d.Inset = nil
	return d, cs, nil
}

// scalingView is each body's crossover horizon against its value on the
// log-log axis, and the table of what it draws.
func (v *crossoverViews) scalingView(s Spec, rs []seedscsv.Row, panels []string) (Spec, []Curve, []byte, error) {
	xs := make([]float64, len(panels))
	for i, p := range panels {
		x, ok := v.panelX[p]
		if !ok {
			return Spec{}, nil, nil, fmt.Errorf("companion_crossover: panel %q has no value in panel_x", p)
		}
		xs[i] = x
	}
	an, err := crossing.Analyze(rs, panels, xs, append([]string{v.leader}, v.scaling...), v.premise)
	if err != nil {
		return Spec{}, nil, nil, fmt.Errorf("companion_crossover: %w", err)
	}
	// The grid's horizons bound the y axis; a bracket open at an end runs
	// to that edge.
	hMin, hMax := math.Inf(1), math.Inf(-1)
	for _, r := range rs {
		hMin, hMax = min(hMin, r.X), max(hMax, r.X)
	}
	yLo, yHi := hMin/1.5, hMax*1.5
	xLo, xHi := slices.Min(xs)/1.5, slices.Max(xs)*1.5
	bar := Curve{Panel: "all", Curve: "bracket"}
	dot := Curve{Panel: "all", Curve: "point"}
	// A body whose advantage changes sign more than once has no bracket:
	// its bar, in its own colour, runs from the horizon where the leader
	// is clearly ahead up to the one where it is clearly behind, and has
	// no tick (a crossover point there would read as the crossover) and no
	// part in the theory line's fit (crossing.Fit).
	broken := Curve{Panel: "all", Curve: "broken"}
	var table strings.Builder
	table.WriteString("panel,x,lo,hi,point,seeds,alpha,used\n")
	var parts []string
	var notes []Note
	// Bodies with the same value (HalfCheetah and Walker2d: d/p = 17) are
	// drawn side by side, 5% apart on the log axis.
	at := make([]float64, len(xs))
	shifted := false
	for i, x := range xs {
		at[i] = x
		for j := range i {
			if xs[j] == x {
				at[i] *= 1.05
				shifted = true
			}
		}
	}
	for i, b := range an.Brackets {
		if b.Unused != "" { // no bar: it would read as a bracket open at both ends
			fmt.Fprintf(&table, "%s,%s,,,,%d,%s,no\n", panels[i], task.FormatFloat(xs[i]), b.Seeds, task.FormatFloat(an.Alpha))
			parts = append(parts, panelTitle(s, panels[i])+": not used, "+b.Unused)
			continue
		}
		if !b.Consistent() {
			broken.X = append(broken.X, at[i], at[i], at[i])
			broken.Mean = append(broken.Mean, b.Hi, b.Lo, math.NaN())
			broken.N = max(broken.N, b.Seeds)
			notes = append(notes, Note{X: at[i], Lo: b.Hi, Hi: b.Lo, Text: shortTitle(panelTitle(s, panels[i]))})
			fmt.Fprintf(&table, "%s,%s,%s,%s,,%d,%s,yes\n", panels[i], task.FormatFloat(xs[i]), task.FormatFloat(b.Lo), task.FormatFloat(b.Hi), b.Seeds, task.FormatFloat(an.Alpha))
			parts = append(parts, panelTitle(s, panels[i])+": "+bracketText(b))
			continue
		}
		lo, hi := b.Lo, b.Hi
		if !(lo > 0) {
			lo = yLo
		}
		if math.IsInf(hi, 1) {
			hi = yHi
		}
		bar.X = append(bar.X, at[i], at[i], at[i])
		bar.Mean = append(bar.Mean, lo, hi, math.NaN())
		note := Note{X: at[i], Lo: lo, Hi: hi, Text: shortTitle(panelTitle(s, panels[i]))} // the body's name at its bar
		if !math.IsNaN(b.Point) {                                                          // a short tick across the bar
			dot.X, dot.Mean = append(dot.X, at[i]/1.04, at[i]*1.04, at[i]), append(dot.Mean, b.Point, b.Point, math.NaN())
			note.Marks = []Mark{{X0: at[i] / 1.04, X1: at[i] * 1.04, Y: b.Point}}
		}
		notes = append(notes, note)
		fmt.Fprintf(&table, "%s,%s,%s,%s,%s,%d,%s,yes\n", panels[i], task.FormatFloat(xs[i]), task.FormatFloat(b.Lo), task.FormatFloat(b.Hi), task.FormatFloat(b.Point), b.Seeds, task.FormatFloat(an.Alpha))
		parts = append(parts, panelTitle(s, panels[i])+": "+bracketText(b))
		bar.N, dot.N = max(bar.N, b.Seeds), max(dot.N, b.Seeds)
	}
	// No bands: a bracket is the bar itself.
	nans := func(n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	bar.Lo, bar.Hi = nans(len(bar.X)), nans(len(bar.X))
	dot.Lo, dot.Hi = nans(len(dot.X)), nans(len(dot.X))
	broken.Lo, broken.Hi = nans(len(broken.X)), nans(len(broken.X))
	var cs []Curve
	for _, c := range []Curve{bar, dot, broken} {
		if len(c.X) > 0 {
			cs = append(cs, c)
		}
	}
	lead, rivals := styleLabel(s, v.leader), make([]string, len(v.scaling))
	for i, r := range v.scaling {
		rivals[i] = styleLabel(s, r)
	}
	panel := PanelSpec{Key: "all", XLabel: v.xLabel, YLabel: "Crossover horizon H*", LogX: true, LogY: true, XMin: &xLo, XMax: &xHi, YMin: &yLo, YMax: &yHi, Notes: notes}
	slope, c := crossing.Fit(xs, an.Brackets, v.slope)
	if !math.IsNaN(c) {
		panel.Guides = append(panel.Guides, Guide{Label: "slope " + sig4(v.slope) + " (theory)", Color: Colors["red"], X: []float64{xLo, xHi}, Y: []float64{math.Exp(c) * math.Pow(xLo, v.slope), math.Exp(c) * math.Pow(xHi, v.slope)}, InLegend: true})
	}
	slopes := "No power law passes through every bracket"
	switch {
	case len(broken.X) > 0:
		slopes = "A body without a single crossover has no crossover horizon for a power law to pass through"
	case an.OK && math.IsInf(an.Lo, -1) && math.IsInf(an.Hi, 1):
		slopes = "Lines of any slope pass through every bracket"
	case an.OK:
		slopes = fmt.Sprintf("The lines through every bracket have slopes in [%s, %s]", sig4(an.Lo), sig4(an.Hi))
	}
	if !math.IsNaN(slope) {
		slopes += fmt.Sprintf("; least squares through the ticks: %s", sig4(slope))
	}
	sp := Spec{Title: fmt.Sprintf("Where %s overtakes %s: the crossover horizon against %s", lead, strings.Join(rivals, ", "), v.xLabel), Panels: []PanelSpec{panel},
		Curves: []CurveStyle{{Key: "bracket", Label: "bracket of H*", Color: color.Black, NoBand: true}, {Key: "point", Label: "mean advantage turns positive", Color: Colors["blue"], NoBand: true}}}
	if len(broken.X) > 0 {
		sp.Curves = append(sp.Curves, CurveStyle{Key: "broken", Label: "no single H*: ahead at its foot, behind at its top", Color: Colors["gray"], NoBand: true})
	}
	same := ""
	if shifted {
		same = " Bodies with the same " + v.xLabel + " are drawn side by side, 5% apart."
	}
	if v.premise.Set() {
		same += fmt.Sprintf(" A body takes part only where the mean of %s over the mean of %s leaves [%s, %s] at some H (the scaling claims' premise: otherwise the methods do not differ and a bracket would say nothing).",
			lead, styleLabel(s, v.scaling[0]), sig4(v.premise.Lo), sig4(v.premise.Hi))
	}
	sp.Caption = fmt.Sprintf("A companion view of the same runs, this project's summary of issue 44: each body's crossover horizon H*, from which %s is ahead of %s. Bar: H* lies above every H where %s is clearly behind and at or below every H where it is clearly ahead (paired t intervals at %s each, Bonferroni over the %d horizons of all %d bodies and %d rival(s), so that all bars hold together with at least 95%% if the advantage changes sign once); a bar that reaches the top or bottom is open there. Tick: where the mean advantage turns positive, interpolated in log H. Dashed: the theory's slope %s through the ticks.%s %s. %s.",
		lead, strings.Join(rivals, ", "), lead, sig4(1-an.Alpha), an.Horizons, len(panels), an.Rivals, sig4(v.slope), same, strings.Join(parts, "; "), slopes)
	return sp, cs, []byte(table.String()), nil
}

// styleLabel is a curve's legend label in s, else its key.
func styleLabel(s Spec, key string) string {
	for _, c := range s.Curves {
		if c.Key == key {
			return c.Label
		}
	}
	return key
}

// bracketText is a bracket in words.
func bracketText(b crossing.Bracket) string {
	switch {
	case !b.Consistent():
		return fmt.Sprintf("clearly behind at H = %s above clearly ahead at %s: no single crossover", sig4(b.Lo), sig4(b.Hi))
	case !(b.Lo > 0) && math.IsInf(b.Hi, 1):
		return "neither clearly ahead nor behind anywhere on the grid"
	case !(b.Lo > 0):
		return "H* ≤ " + sig4(b.Hi)
	case math.IsInf(b.Hi, 1):
		return "H* > " + sig4(b.Lo)
	}
	return fmt.Sprintf("%s < H* ≤ %s", sig4(b.Lo), sig4(b.Hi))
}

// shortTitle is a panel's title without its parenthesis and a trailing
// gym version ("Swimmer" of "Swimmer-v2 (d/p = 8)"): beside a bar on the
// d/p axis the name is enough, and the scaling view has six of them to
// place, four within a factor of 2.2 of d/p (8, 11, 17, 17).
var gymVersion = regexp.MustCompile(`-v[0-9]+$`)

func shortTitle(title string) string {
	if i := strings.Index(title, " ("); i > 0 {
		title = title[:i]
	}
	return gymVersion.ReplaceAllString(title, "")
}
