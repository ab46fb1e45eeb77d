package plot

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"zorepro/pipeline/task"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Layout constants (see also the defaults in figure.go).
const (
	margin         = 0.1 * vg.Inch  // around the whole figure
	gap            = 0.08 * vg.Inch // between title, panels, legend and caption
	panelGap       = 0.15 * vg.Inch // between adjacent panels
	rowGap         = 0.25 * vg.Inch // between rows of panels
	minPanelH      = 1.2 * vg.Inch  // smallest panel height Render accepts
	minPanelW      = 1.2 * vg.Inch  // smallest panel width Render accepts
	lineWidth      = 1.5            // mean line, points
	bandAlpha      = 0.25           // band opacity relative to the line colour
	dataMargin     = 0.04           // auto axis range padding, fraction of span
	thumbWidth     = 0.3 * vg.Inch  // legend thumbnail
	thumbHalfH     = 4.5            // legend thumbnail half height, points
	entrySpacing   = 16             // between legend entries, points
	insetPad       = 6              // between an inset and its panel's frame, points
	labelPad       = 2              // between an axis label and its tick labels, points
	maxLogLabels   = 8              // at most this many labelled decades
	maxLinLabels   = 6              // at most this many labels on a linear axis
	maxInsetLabels = 5              // the same in an inset
	titleFontSize  = 14
	legendFontSz   = 11
	captionFontSz  = 10
	insetTickSize  = 8
)

// Render draws the figure described by spec with the given curves and
// returns it as PNG (PNGDPI dots per inch) and as SVG. Both are
// byte-identical for identical inputs on the same GOARCH. Every problem
// with spec and curves is reported at once, wrapped around ErrBadSpec.
func Render(spec Spec, curves []Curve) (png, svg []byte, err error) {
	f, err := newFigure(spec, curves)
	if err != nil {
		return nil, nil, err
	}

	img := vgimg.NewWith(vgimg.UseWH(f.w, f.h), vgimg.UseDPI(PNGDPI))
	f.draw(draw.New(img))
	var pb bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&pb); err != nil {
		return nil, nil, fmt.Errorf("plot: encoding PNG: %w", err)
	}

	sv := vgsvg.New(f.w, f.h)
	f.draw(draw.New(sv))
	var sb bytes.Buffer
	if _, err := sv.WriteTo(&sb); err != nil {
		return nil, nil, fmt.Errorf("plot: encoding SVG: %w", err)
	}
	return pb.Bytes(), sb.Bytes(), nil
}

// figure is a validated Spec with its curves matched to panels and styles
// and its vertical layout resolved.
type figure struct {
	spec       Spec
	w, h       vg.Length
	panels     []panelData
	legend     []CurveStyle // styles used by some panel, in Spec.Curves order
	legendRows [][]int      // indices into legend, one slice per row
	title      string       // wrapped to the figure width, lines joined by "\n"
	caption    string       // wrapped, lines joined by "\n"

	titleH, legendH, captionH vg.Length
}

type panelData struct {
	spec   PanelSpec
	curves []styledCurve // in Spec.Curves order
	inset  *InsetSpec    // nil: no inset
}

type styledCurve struct {
	c     Curve
	style CurveStyle
}

var (
	// figureText draws every text of a figure.
	figureText = supText{text.Plain{Fonts: font.DefaultCache}}

	titleStyle   = textStyle(titleFontSize, draw.XCenter, draw.YTop)
	legendStyle  = textStyle(legendFontSz, draw.XLeft, draw.YCenter)
	captionStyle = textStyle(captionFontSz, draw.XLeft, draw.YTop)
	frameStyle   = draw.LineStyle{Color: color.Black, Width: vg.Points(0.5)}
)

func textStyle(size vg.Length, xa draw.XAlignment, ya draw.YAlignment) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(gplot.DefaultFont, size),
		XAlign:  xa,
		YAlign:  ya,
		Handler: figureText,
	}
}

// newFigure validates spec and curves and computes the layout.
func newFigure(spec Spec, curves []Curve) (*figure, error) {
	v := &specCheck{}
	v.size(spec)
	f := &figure{spec: spec}
	panelIdx := v.panels(f)
	styleIdx := v.styles(spec)
	v.assign(f, curves, panelIdx, styleIdx)
	v.inset(f, panelIdx)
	if len(v.errs) > 0 {
		return nil, errors.Join(v.errs...)
	}
	if err := f.layout(); err != nil {
		return nil, err
	}
	return f, nil
}

// specCheck collects every problem of a Spec and its curves, in the order
// they are found.
type specCheck struct{ errs []error }

func (v *specCheck) bad(format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf("%w: "+format, append([]any{ErrBadSpec}, args...)...))
}

// size checks the panel count, the caption and the figure's size.
func (v *specCheck) size(spec Spec) {
	if len(spec.Panels) == 0 {
		v.bad("no panels")
	}
	if strings.TrimSpace(spec.Caption) == "" {
		v.bad("empty caption (it must state what the band is, see Band.Caption)")
	}
	if spec.Width < 0 || spec.Height < 0 {
		v.bad("negative size %v x %v", spec.Width, spec.Height)
	}
	if spec.Columns < 0 {
		v.bad("negative number of columns %d", spec.Columns)
	}
	if n, _ := spec.grid(); spec.Width > 0 && n > 0 && (spec.Width-2*margin)/vg.Length(n) < minPanelW {
		v.bad("width %v leaves less than %v per panel", spec.Width, minPanelW)
	}
}

// panels sets up f.panels (f.panels[i] is spec.Panels[i]), checks their
// keys and limits, and returns the panel of each key (lookup only).
func (v *specCheck) panels(f *figure) map[string]int {
	panelIdx := map[string]int{}
	f.panels = make([]panelData, len(f.spec.Panels))
	for i, p := range f.spec.Panels {
		f.panels[i].spec = p
		if _, dup := panelIdx[p.Key]; dup {
			v.bad("duplicate panel key %q", p.Key)
			continue
		}
		panelIdx[p.Key] = i
		checkLimits(v.bad, p.Key, "x", p.LogX, p.XMin, p.XMax)
		checkLimits(v.bad, p.Key, "y", p.LogY, p.YMin, p.YMax)
	}
	return panelIdx
}

// styles checks the curve styles and returns the style of each curve key
// (lookup only).
func (v *specCheck) styles(spec Spec) map[string]int {
	styleIdx := map[string]int{}
	for i, s := range spec.Curves {
		if _, dup := styleIdx[s.Key]; dup {
			v.bad("duplicate curve key %q", s.Key)
			continue
		}
		if s.Color == nil {
			v.bad("curve %q has no colour", s.Key)
		}
		styleIdx[s.Key] = i
	}
	return styleIdx
}

// assign matches curves to panels and styles, draws them in Spec.Curves
// order and lists the styles used in the legend.
func (v *specCheck) assign(f *figure, curves []Curve, panelIdx, styleIdx map[string]int) {
	spec := f.spec
	type pc struct{ panel, curve string }
	seen := map[pc]bool{} // lookup only
	perPanel := make([][]styledCurve, len(spec.Panels))
	used := make([]bool, len(spec.Curves))
	for _, c := range curves {
		pi, okP := panelIdx[c.Panel]
		si, okS := styleIdx[c.Curve]
		switch {
		case !okP:
			v.bad("curve %q: unknown panel %q", c.Curve, c.Panel)
			continue
		case !okS:
			v.bad("panel %q: curve %q has no CurveStyle", c.Panel, c.Curve)
			continue
		case seen[pc{c.Panel, c.Curve}]:
			v.bad("panel %q: curve %q given twice", c.Panel, c.Curve)
			continue
		case len(c.Mean) != len(c.X) || len(c.Lo) != len(c.X) || len(c.Hi) != len(c.X):
			v.bad("panel %q curve %q: len(X, Mean, Lo, Hi) = %d, %d, %d, %d",
				c.Panel, c.Curve, len(c.X), len(c.Mean), len(c.Lo), len(c.Hi))
			continue
		}
		seen[pc{c.Panel, c.Curve}] = true
		used[si] = true
		perPanel[pi] = append(perPanel[pi], styledCurve{c: c, style: spec.Curves[si]})
	}
	for i := range f.panels {
		if panelIdx[f.panels[i].spec.Key] != i { // a duplicate key; already reported
			continue
		}
		cs := perPanel[i]
		if len(cs) == 0 {
			v.bad("panel %q has no curves", f.panels[i].spec.Key)
		}
		// Style keys are unique within a panel (checked above), so this
		// order is total.
		slices.SortFunc(cs, func(a, b styledCurve) int {
			return cmp.Compare(styleIdx[a.c.Curve], styleIdx[b.c.Curve])
		})
		f.panels[i].curves = cs
	}
	for i, s := range spec.Curves {
		if used[i] {
			f.legend = append(f.legend, s)
		}
	}
	// Guides named in the legend follow the curves, each label once.
	for _, p := range spec.Panels {
		for _, g := range p.Guides {
			if g.InLegend && !slices.ContainsFunc(f.legend, func(s CurveStyle) bool { return s.dashed && s.Label == g.Label }) {
				f.legend = append(f.legend, CurveStyle{Label: g.Label, Color: g.Color, NoBand: true, dashed: true})
			}
		}
	}
}

// inset checks the inset and attaches it to its panel (or every panel).
func (v *specCheck) inset(f *figure, panelIdx map[string]int) {
	if f.spec.Inset == nil {
		return
	}
	in := new(InsetSpec)
	*in = *f.spec.Inset
	if in.Panel != "" {
		if _, ok := panelIdx[in.Panel]; !ok {
			v.bad("inset: unknown panel %q", in.Panel)
		}
	}
	if !(in.XMin < in.XMax) || !finite(in.XMin) || !finite(in.XMax) {
		v.bad("inset: x limits [%s, %s] are not finite and increasing", task.FormatFloat(in.XMin), task.FormatFloat(in.XMax))
	}
	if !(in.YMin < in.YMax) || !finite(in.YMin) || !finite(in.YMax) {
		v.bad("inset: y limits [%s, %s] are not finite and increasing", task.FormatFloat(in.YMin), task.FormatFloat(in.YMax))
	}
	if !(in.Width >= 0 && in.Width <= 1) || !(in.Height >= 0 && in.Height <= 1) {
		v.bad("inset: size fractions %s x %s not in (0, 1] (0 means the default)", task.FormatFloat(in.Width), task.FormatFloat(in.Height))
	}
	for i := range f.panels {
		p := f.panels[i].spec
		if in.Panel != "" && in.Panel != p.Key {
			continue
		}
		f.panels[i].inset = in
		if p.LogX && !(in.XMin > 0) {
			v.bad("inset on log-x panel %q: x limits must be positive", p.Key)
		}
		if p.LogY && !(in.YMin > 0) {
			v.bad("inset on log-y panel %q: y limits must be positive", p.Key)
		}
	}
}

// grid is the panels' layout: columns and rows (Columns, or one row).
func (s Spec) grid() (cols, rows int) {
	n := len(s.Panels)
	cols = n
	if s.Columns > 0 && s.Columns < n {
		cols = s.Columns
	}
	if cols == 0 {
		return 0, 1
	}
	return cols, (n + cols - 1) / cols
}

// layout sizes the figure: the width from the panels of a row, the height
// from the title, rows of panels, legend and caption.
func (f *figure) layout() error {
	spec := f.spec
	cols, rows := spec.grid()
	f.w = spec.Width
	if f.w == 0 {
		f.w = DefaultPanelWidth*vg.Length(cols) + 2*margin
	}
	inner := f.w - 2*margin
	if spec.Title != "" {
		f.title = wrapText(titleStyle, spec.Title, inner)
		f.titleH = titleStyle.Height(f.title) + gap
	}
	f.layoutLegend(inner)
	f.caption = wrapText(captionStyle, spec.Caption, inner)
	f.captionH = captionStyle.Height(f.caption)
	fixed := 2*margin + f.titleH + f.legendH + gap + f.captionH + gap + vg.Length(rows-1)*rowGap
	f.h = spec.Height
	if f.h == 0 {
		f.h = fixed + DefaultPanelHeight*vg.Length(rows)
	}
	if (f.h-fixed)/vg.Length(rows) < minPanelH {
		return fmt.Errorf("%w: height %v leaves %v for %d row(s) of panels after title, legend and caption (need %v a row)",
			ErrBadSpec, f.h, f.h-fixed, rows, minPanelH)
	}
	return nil
}

func checkLimits(bad func(string, ...any), key, axis string, log bool, lo, hi *float64) {
	for _, l := range []*float64{lo, hi} {
		if l != nil && !finite(*l) {
			bad("panel %q: %s limit %s is not finite", key, axis, task.FormatFloat(*l))
		}
	}
	if lo != nil && hi != nil && !(*lo < *hi) && !(log && *lo <= 0) {
		bad("panel %q: %s limits [%s, %s] are not increasing", key, axis, task.FormatFloat(*lo), task.FormatFloat(*hi))
	}
	if log && hi != nil && *hi <= 0 {
		bad("panel %q: log %s axis with non-positive max %s", key, axis, task.FormatFloat(*hi))
	}
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// layoutLegend splits the legend entries into rows no wider than width.
func (f *figure) layoutLegend(width vg.Length) {
	f.legendRows = nil
	var row []int
	var rowW vg.Length
	for i, s := range f.legend {
		w := entryWidth(s)
		if len(row) > 0 && rowW+vg.Points(entrySpacing)+w > width {
			f.legendRows = append(f.legendRows, row)
			row, rowW = nil, 0
		}
		if len(row) > 0 {
			rowW += vg.Points(entrySpacing)
		}
		row = append(row, i)
		rowW += w
	}
	if len(row) > 0 {
		f.legendRows = append(f.legendRows, row)
	}
	f.legendH = vg.Length(len(f.legendRows)) * legendRowH()
}

func legendRowH() vg.Length {
	return max(legendStyle.Height("Xg"), vg.Points(2*thumbHalfH)) + vg.Points(4)
}

func entryWidth(s CurveStyle) vg.Length {
	return thumbWidth + vg.Points(5) + legendStyle.Width(s.Label)
}

// wrapText greedily wraps each paragraph of txt to width and joins the
// lines with "\n". A word wider than width gets a line of its own.
func wrapText(sty text.Style, txt string, width vg.Length) string {
	var lines []string
	for _, para := range strings.Split(strings.TrimSpace(txt), "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			if line == "" {
				line = word
				continue
			}
			if cand := line + " " + word; sty.Width(cand) <= width {
				line = cand
				continue
			}
			lines = append(lines, line)
			line = word
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// draw draws the whole figure onto c, whose size is f.w x f.h.
// The background is opaque white in both formats (vgsvg would otherwise
// leave it transparent).
func (f *figure) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())

	top := c.Max.Y - margin
	left, right := c.Min.X+margin, c.Max.X-margin

	if f.spec.Title != "" {
		c.FillText(titleStyle, vg.Point{X: (left + right) / 2, Y: top}, f.title)
		top -= f.titleH
	}

	captionTop := c.Min.Y + margin + f.captionH
	legendTop := captionTop + gap + f.legendH
	panelsBottom := legendTop + gap

	area := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: left, Y: panelsBottom},
		Max: vg.Point{X: right, Y: top},
	}}
	cols, rows := f.spec.grid()
	tiles := draw.Tiles{Cols: cols, Rows: rows, PadX: panelGap, PadY: rowGap}
	for i, p := range f.panels {
		p.draw(tiles.At(area, i%cols, i/cols))
	}

	f.drawLegend(c, left, right, legendTop)
	c.FillText(captionStyle, vg.Point{X: left, Y: captionTop}, f.caption)
}

// drawLegend draws the legend rows, each centred between left and right,
// starting at top.
func (f *figure) drawLegend(c draw.Canvas, left, right, top vg.Length) {
	rowH := legendRowH()
	for r, row := range f.legendRows {
		var w vg.Length
		for j, i := range row {
			if j > 0 {
				w += vg.Points(entrySpacing)
			}
			w += entryWidth(f.legend[i])
		}
		x := (left+right)/2 - w/2
		yc := top - vg.Length(r)*rowH - rowH/2
		for _, i := range row {
			s := f.legend[i]
			h := vg.Points(thumbHalfH)
			if !s.NoBand {
				c.FillPolygon(bandColor(s.Color), []vg.Point{
					{X: x, Y: yc - h}, {X: x + thumbWidth, Y: yc - h},
					{X: x + thumbWidth, Y: yc + h}, {X: x, Y: yc + h},
				})
			}
			ls := lineStyle(s.Color)
			if s.dashed {
				ls = hlineStyle
				ls.Color = s.Color
			}
			c.StrokeLine2(ls, x, yc, x+thumbWidth, yc)
			c.FillText(legendStyle, vg.Point{X: x + thumbWidth + vg.Points(5), Y: yc}, s.Label)
			x += entryWidth(s) + vg.Points(entrySpacing)
		}
	}
}

func lineStyle(c color.Color) draw.LineStyle {
	return draw.LineStyle{Color: c, Width: vg.Points(lineWidth)}
}

// bandColor is c at bandAlpha of its opacity.
func bandColor(c color.Color) color.Color {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	n.A = uint8(math.Round(float64(n.A) * bandAlpha))
	return n
}

// draw draws one panel, and its inset if it has one, into tile c.
func (p panelData) draw(c draw.Canvas) {
	s := p.spec
	floor := p.logFloor()
	pl := newPlot(p.curves, s.LogX, s.LogY, floor, 0)
	pl.Title.Text = s.Title
	for _, h := range s.HLines {
		if !s.LogY || h.Y > 0 {
			pl.Add(hline{HLine: h, curves: p.curves})
		}
	}
	pl.ys = append(pl.ys, p.referenceYs()...)
	// The highest guide at the right end is labelled above its line, the
	// others below theirs, so that two close bounds do not overprint.
	top := -1
	for i, g := range s.Guides {
		if n := len(g.Y); n > 0 && (top < 0 || g.Y[n-1] > s.Guides[top].Y[len(s.Guides[top].Y)-1]) {
			top = i
		}
	}
	for i, g := range s.Guides {
		pl.Add(guide{Guide: g, labelBelow: i != top})
	}
	if len(s.Notes) > 0 {
		pl.Add(notes{notes: s.Notes, guides: s.Guides})
	}
	pl.X.Min, pl.X.Max = axisRange(pl.xs, s.LogX, s.XMin, s.XMax)
	pl.Y.Min, pl.Y.Max = axisRange(pl.ys, s.LogY, s.YMin, s.YMax)

	// The axis labels are drawn here rather than by gonum/plot, which
	// reserves room for them around the arithmetic midpoint of the axis
	// range: on a log axis that is far from the drawn centre and shrinks
	// the data area.
	lsty := pl.X.Label.TextStyle
	descent := lsty.FontExtents().Descent
	var xlH, ylW vg.Length
	if s.XLabel != "" {
		xlH = lsty.Height(s.XLabel) + vg.Points(labelPad)
	}
	if s.YLabel != "" {
		ylW = lsty.Height(s.YLabel) + vg.Points(labelPad)
	}
	pc := draw.Crop(c, ylW, 0, xlH, 0)
	pl.Draw(pc)
	dc := pl.DataCanvas(pc)
	drawFrame(dc)
	if s.XLabel != "" {
		c.FillText(lsty, vg.Point{X: dc.Center().X, Y: c.Min.Y + descent}, s.XLabel)
	}
	if s.YLabel != "" {
		ysty := lsty
		ysty.Rotation = math.Pi / 2
		c.FillText(ysty, vg.Point{X: c.Min.X + lsty.Height(s.YLabel) - descent, Y: dc.Center().Y}, s.YLabel)
	}

	in := p.inset
	if in == nil {
		return
	}
	fw, fh := in.Width, in.Height
	if fw == 0 {
		fw = DefaultInsetFraction
	}
	if fh == 0 {
		fh = DefaultInsetFraction
	}
	ic := draw.Canvas{Canvas: c.Canvas, Rectangle: insetRect(dc.Rectangle, fw, fh, p.occupancy(pl, dc, floor))}
	ip := newPlot(p.curves, s.LogX, s.LogY, floor, insetTickSize)
	ip.X.Min, ip.X.Max = in.XMin, in.XMax
	ip.Y.Min, ip.Y.Max = p.insetYLimits(in, s.LogY)
	ip.Draw(ic)
	drawFrame(ip.DataCanvas(ic))
}

// hline draws a reference line across the data area, dashed gray, with
// its label at one of its ends, above or below it: the first of right
// above, right below, left above, left below that stays inside the frame
// and crosses the fewest of the panel's curves and bands (Fig. 3c's cap,
// which the noisiest runs reach on the right).
type hline struct {
	HLine
	curves []styledCurve
}

var (
	hlineStyle      = draw.LineStyle{Color: color.Gray{Y: 0x60}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
	hlineLabelStyle = textStyle(legendFontSz, draw.XRight, draw.YBottom)
)

// Plot implements gonum/plot's Plotter.
func (h hline) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	y := trY(h.Y)
	c.StrokeLine2(hlineStyle, c.Min.X, y, c.Max.X, y)
	if h.Label == "" {
		return
	}
	var curves [][]span
	for _, sc := range h.curves {
		curves = append(curves, curveSpans(sc.c, trX, trY, isLog(p.X.Scale), isLog(p.Y.Scale)))
	}
	sty := hlineLabelStyle
	at := hlineLabelAt(box{c.Min, c.Max}, y, vg.Point{X: sty.Width(h.Label), Y: sty.Height(h.Label)}, curves)
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
	c.FillText(sty, at.min, h.Label)
}

// hlineLabelAt places a label of the given size at an end of the line at
// y across frame: the first of right above, right below, left above, left
// below (3 points in from the frame's side, 2 from the line) that is
// inside the frame and crosses the fewest curves; above the right end
// where none is inside.
func hlineLabelAt(frame box, y vg.Length, size vg.Point, curves [][]span) box {
	inset, gap := vg.Points(3), vg.Points(2)
	var best box
	bestCost := -1
	for _, left := range []vg.Length{frame.max.X - inset - size.X, frame.min.X + inset} {
		for _, bottom := range []vg.Length{y + gap, y - gap - size.Y} {
			b := box{vg.Point{X: left, Y: bottom}, vg.Point{X: left + size.X, Y: bottom + size.Y}}
			if !b.inside(frame) {
				continue
			}
			if cost := crossings(curves, b); bestCost < 0 || cost < bestCost {
				best, bestCost = b, cost
			}
		}
	}
	if bestCost < 0 {
		left := frame.max.X - inset - size.X
		best = box{vg.Point{X: left, Y: y + gap}, vg.Point{X: left + size.X, Y: y + gap + size.Y}}
	}
	return best
}

// span is a curve's vertical extent (its mean and band) at a point, in
// canvas coordinates.
type span struct{ x, lo, hi vg.Length }

// curveSpans are the drawable points of c as spans.
func curveSpans(c Curve, trX, trY func(float64) vg.Length, logX, logY bool) []span {
	var out []span
	for i := range c.X {
		if !meanDrawable(c, i, logX, logY) {
			continue
		}
		m := trY(c.Mean[i])
		sp := span{x: trX(c.X[i]), lo: m, hi: m}
		if bandDrawable(c, i, logX, logY) {
			for _, v := range []float64{c.Lo[i], c.Hi[i]} {
				if v > 0 || !logY {
					sp.lo, sp.hi = min(sp.lo, trY(v)), max(sp.hi, trY(v))
				}
			}
		}
		out = append(out, sp)
	}
	return out
}

// crossings counts, over 24 columns across b, the curves whose extent
// (interpolated between their points) meets b's height there.
func crossings(curves [][]span, b box) int {
	const columns = 24
	n := 0
	for k := range columns {
		x := b.min.X + (b.max.X-b.min.X)*vg.Length(k)/(columns-1)
		for _, sp := range curves {
			i := slices.IndexFunc(sp, func(s span) bool { return s.x >= x })
			if i < 0 || (i == 0 && sp[0].x > x) {
				continue // outside the curve's x range
			}
			lo, hi := sp[i].lo, sp[i].hi
			if i > 0 && sp[i].x > x {
				p, q := sp[i-1], sp[i]
				t := (x - p.x) / (q.x - p.x)
				lo, hi = p.lo+(q.lo-p.lo)*t, p.hi+(q.hi-p.hi)*t
			}
			if hi >= b.min.Y && lo <= b.max.Y {
				n++
			}
		}
	}
	return n
}

// referenceYs are the y values of the panel's reference lines and guides
// that its y range must include (the positive ones on a log axis).
func (p panelData) referenceYs() []float64 {
	s := p.spec
	var ys []float64
	for _, h := range s.HLines {
		if !s.LogY || h.Y > 0 {
			ys = append(ys, h.Y)
		}
	}
	for _, g := range s.Guides {
		for i, y := range g.Y {
			if (!s.LogY || y > 0) && (!s.LogX || g.X[i] > 0) {
				ys = append(ys, y)
			}
		}
	}
	return ys
}

// guide draws a reference curve dashed in its colour, its label above its
// last point, right-aligned.
type guide struct {
	Guide
	labelBelow bool
}

// Plot implements gonum/plot's Plotter.
func (g guide) Plot(c draw.Canvas, p *gplot.Plot) {
	sty := hlineStyle
	sty.Color = g.Color
	pts := g.onCanvas(c, p)
	if len(pts) < 2 {
		return
	}
	c.StrokeLines(sty, c.ClipLinesXY(pts)...)
	if g.Label != "" && !g.InLegend {
		end := pts[len(pts)-1]
		// The label spans [right − its width, right]: it sits above (or
		// below) the line over that whole span, not only at its end.
		right := min(end.X, c.Max.X) - vg.Points(3)
		yl := polylineY(pts, right-hlineLabelStyle.Width(g.Label))
		sty, y := hlineLabelStyle, max(end.Y, yl)+vg.Points(2)
		if g.labelBelow {
			sty.YAlign, y = draw.YTop, min(end.Y, yl)-vg.Points(2)
		}
		c.FillText(sty, vg.Point{X: right, Y: y}, g.Label)
	}
}

// onCanvas is the guide's points on the canvas, those a log axis cannot
// draw left out.
func (g Guide) onCanvas(c draw.Canvas, p *gplot.Plot) []vg.Point {
	trX, trY := p.Transforms(&c)
	var pts []vg.Point
	for i, x := range g.X {
		if (x > 0 || !isLog(p.X.Scale)) && (g.Y[i] > 0 || !isLog(p.Y.Scale)) {
			pts = append(pts, vg.Point{X: trX(x), Y: trY(g.Y[i])})
		}
	}
	return pts
}

// notes draw each Note's text at the first free place around its bar,
// clear of the panel's guides and the notes' marks where there is room.
type notes struct {
	notes  []Note
	guides []Guide
}

// noteGap is the space between a bar and its note's text.
const noteGap = 3

// box is a rectangle on the canvas.
type box struct{ min, max vg.Point }

func (a box) overlaps(b box) bool {
	return a.min.X < b.max.X && b.min.X < a.max.X && a.min.Y < b.max.Y && b.min.Y < a.max.Y
}

// crosses says whether the polyline pts passes through a (Liang–Barsky
// clipping of each segment).
func (a box) crosses(pts []vg.Point) bool {
	for i := 1; i < len(pts); i++ {
		p, q := pts[i-1], pts[i]
		dx, dy := q.X-p.X, q.Y-p.Y
		t0, t1 := vg.Length(0), vg.Length(1)
		clip := func(den, num vg.Length) bool { // keep den·t ≤ num
			switch {
			case den == 0:
				return num >= 0
			case den > 0:
				t1 = min(t1, num/den)
			default:
				t0 = max(t0, num/den)
			}
			return t0 <= t1
		}
		if clip(-dx, p.X-a.min.X) && clip(dx, a.max.X-p.X) && clip(-dy, p.Y-a.min.Y) && clip(dy, a.max.Y-p.Y) {
			return true
		}
	}
	return false
}

func (a box) inside(area box) bool {
	return a.min.X >= area.min.X && a.max.X <= area.max.X && a.min.Y >= area.min.Y && a.max.Y <= area.max.Y
}

// Plot implements gonum/plot's Plotter.
func (ns notes) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := textStyle(legendFontSz, draw.XLeft, draw.YBottom)
	var bars []box
	var sizes []vg.Point
	var texts []string
	var lines [][]vg.Point
	for _, g := range ns.guides {
		lines = append(lines, g.onCanvas(c, p))
	}
	for _, n := range ns.notes {
		if (isLog(p.X.Scale) && !(n.X > 0)) || (isLog(p.Y.Scale) && !(n.Lo > 0 && n.Hi > 0)) {
			continue
		}
		x := trX(n.X)
		bars = append(bars, box{vg.Point{X: x - 1, Y: trY(n.Lo)}, vg.Point{X: x + 1, Y: trY(n.Hi)}})
		for _, m := range n.Marks {
			if !(isLog(p.X.Scale) && !(m.X0 > 0 && m.X1 > 0) || isLog(p.Y.Scale) && !(m.Y > 0)) {
				lines = append(lines, []vg.Point{{X: trX(m.X0), Y: trY(m.Y)}, {X: trX(m.X1), Y: trY(m.Y)}})
			}
		}
		sizes = append(sizes, vg.Point{X: sty.Width(n.Text), Y: sty.Height(n.Text)})
		texts = append(texts, n.Text)
	}
	for i, r := range placeNotes(bars, sizes, box{c.Min, c.Max}, lines) {
		c.FillText(sty, r.min, texts[i])
	}
}

// placeNotes places texts of the given sizes beside their bars, in
// order: each at the first place around its bar (above it, below it,
// centred on it or starting or ending there, right and left of its
// middle, then right and left of it higher and lower along it) that is
// inside area and overlaps no placed text, no other bar and none of the
// lines (polylines on the canvas: the guides, the marks across bars);
// where none is, the first that only crosses a line; then the first that
// overlaps no placed text and no line (it may cross a bar: a full-height
// bar leaves nothing else), then one that overlaps no placed text; where
// none is either, the first inside area.
func placeNotes(bars []box, sizes []vg.Point, area box, lines [][]vg.Point) []box {
	g := vg.Points(noteGap)
	placed := make([]box, 0, len(bars))
	for i, b := range bars {
		w, h := sizes[i].X, sizes[i].Y
		x, mid := (b.min.X+b.max.X)/2, (b.min.Y+b.max.Y)/2
		at := func(minX, minY vg.Length) box {
			return box{vg.Point{X: minX, Y: minY}, vg.Point{X: minX + w, Y: minY + h}}
		}
		above, below := b.max.Y+g, b.min.Y-g-h
		cands := []box{at(x-w/2, above), at(x-w/2, below), at(x-g, above), at(x+g-w, above), at(x-g, below), at(x+g-w, below), at(b.max.X+g, mid-h/2), at(b.min.X-g-w, mid-h/2)}
		for k := vg.Length(1); mid-h/2-k*(h+g) >= b.min.Y || mid-h/2+k*(h+g)+h <= b.max.Y; k++ {
			for _, y := range []vg.Length{mid - h/2 + k*(h+g), mid - h/2 - k*(h+g)} {
				if y >= b.min.Y && y+h <= b.max.Y {
					cands = append(cands, at(b.max.X+g, y), at(b.min.X-g-w, y))
				}
			}
		}
		clearOfNotes := func(r box) bool { return r.inside(area) && !slices.ContainsFunc(placed, r.overlaps) }
		free := func(r box) bool {
			for j, o := range bars {
				if j != i && r.overlaps(o) {
					return false
				}
			}
			return clearOfNotes(r)
		}
		offLines := func(r box) bool { return !slices.ContainsFunc(lines, r.crosses) }
		pick := -1
		for _, ok := range []func(box) bool{
			func(r box) bool { return free(r) && offLines(r) },
			free,
			func(r box) bool { return clearOfNotes(r) && offLines(r) },
			clearOfNotes,
		} {
			if pick = slices.IndexFunc(cands, ok); pick >= 0 {
				break
			}
		}
		if pick < 0 {
			pick = max(0, slices.IndexFunc(cands, func(r box) bool { return r.inside(area) }))
		}
		placed = append(placed, cands[pick])
	}
	return placed
}

// polylineY is the polyline's y at x (pts in increasing x), its end's y
// beyond its ends.
func polylineY(pts []vg.Point, x vg.Length) vg.Length {
	if x <= pts[0].X {
		return pts[0].Y
	}
	for i := 1; i < len(pts); i++ {
		if a, b := pts[i-1], pts[i]; x <= b.X && b.X > a.X {
			return a.Y + (b.Y-a.Y)*(x-a.X)/(b.X-a.X)
		}
	}
	return pts[len(pts)-1].Y
}

func isLog(n gplot.Normalizer) bool {
	_, ok := n.(gplot.LogScale)
	return ok
}

// insetYLimits returns the inset's y limits: the spec's, widened to every
// mean and band value of the curves within its x limits, so that no curve
// leaves the inset (the paper's [0, 2] would clip HalfCheetah's ARS at
// H = 5, at 2.04); a widened end gets 5% of the range as margin.
func (p panelData) insetYLimits(in *InsetSpec, logY bool) (float64, float64) {
	lo, hi := in.YMin, in.YMax
	dlo, dhi := math.Inf(1), math.Inf(-1)
	for _, sc := range p.curves {
		for i, x := range sc.c.X {
			if x < in.XMin || x > in.XMax {
				continue
			}
			for _, y := range []float64{sc.c.Mean[i], sc.c.Lo[i], sc.c.Hi[i]} {
				if !math.IsNaN(y) && !math.IsInf(y, 0) && (!logY || y > 0) {
					dlo, dhi = min(dlo, y), max(dhi, y)
				}
			}
		}
	}
	pad := 0.05 * (max(hi, dhi) - min(lo, dlo))
	if dlo < lo {
		lo = dlo - pad
		if logY {
			lo = dlo / 1.1
		}
	}
	if dhi > hi {
		hi = dhi + pad
		if logY {
			hi = dhi * 1.1
		}
	}
	return lo, hi
}

// occupancyCells is the number of cells per side of the grid over a
// panel's data area on which the drawn lines and bands are marked to place
// its inset.
const occupancyCells = 48

// occupancy marks the cells of an occupancyCells² grid over the data area
// dc (row 0 at the bottom) that a mean line or a band of the panel
// touches, as drawn by pl: lines and band edges sampled at least twice per
// cell, bands filled column by column between their edges. Points that
// cannot be drawn are skipped as newPlot skips them; floor is the panel's
// logFloor.
func (p panelData) occupancy(pl panelPlot, dc draw.Canvas, floor float64) [][]bool {
	const n = occupancyCells
	grid := make([][]bool, n)
	for i := range grid {
		grid[i] = make([]bool, n)
	}
	w, h := dc.Max.X-dc.Min.X, dc.Max.Y-dc.Min.Y
	if w <= 0 || h <= 0 {
		return grid
	}
	trX, trY := pl.Transforms(&dc)
	cell := func(x, y vg.Length) (int, int, bool) {
		i := int(math.Floor(float64((x - dc.Min.X) / w * n)))
		j := int(math.Floor(float64((y - dc.Min.Y) / h * n)))
		return i, j, i >= 0 && i < n && j >= 0 && j < n
	}
	// steps samples a screen distance at least twice per cell.
	steps := func(d vg.Length) int {
		return 1 + int(math.Ceil(math.Abs(float64(d))/float64(min(w, h))*2*n))
	}
	mark := func(x, y vg.Length) {
		if i, j, ok := cell(x, y); ok {
			grid[j][i] = true
		}
	}
	span := func(x, y0, y1 vg.Length) {
		if y0 > y1 {
			y0, y1 = y1, y0
		}
		y0, y1 = max(y0, dc.Min.Y), min(y1, dc.Max.Y-1e-9)
		for y := y0; y <= y1; y += h / n {
			mark(x, y)
		}
		mark(x, y1)
	}
	s := p.spec
	for _, sc := range p.curves {
		c := sc.c
		lineOK := func(i int) bool { return meanDrawable(c, i, s.LogX, s.LogY) }
		bandOK := func(i int) bool { return bandDrawable(c, i, s.LogX, s.LogY) }
		lo := func(i int) float64 {
			if s.LogY && c.Lo[i] <= 0 {
				return floor
			}
			return c.Lo[i]
		}
		for i := range c.X {
			if lineOK(i) {
				mark(trX(c.X[i]), trY(c.Mean[i]))
			}
			if i+1 < len(c.X) && lineOK(i) && lineOK(i+1) {
				x0, y0, x1, y1 := trX(c.X[i]), trY(c.Mean[i]), trX(c.X[i+1]), trY(c.Mean[i+1])
				k := max(steps(x1-x0), steps(y1-y0))
				for t := 0; t <= k; t++ {
					f := vg.Length(t) / vg.Length(k)
					mark(x0+f*(x1-x0), y0+f*(y1-y0))
				}
			}
			if i+1 < len(c.X) && bandOK(i) && bandOK(i+1) {
				x0, x1 := trX(c.X[i]), trX(c.X[i+1])
				h0, h1, l0, l1 := trY(c.Hi[i]), trY(c.Hi[i+1]), trY(lo(i)), trY(lo(i+1))
				k := steps(x1 - x0)
				for t := 0; t <= k; t++ {
					f := vg.Length(t) / vg.Length(k)
					span(x0+f*(x1-x0), l0+f*(l1-l0), h0+f*(h1-h0))
				}
			}
		}
	}
	return grid
}

// insetRect places an inset of fractions fw × fh of the data area da in
// the corner, insetPad inside the frame, that covers the fewest occupied
// cells of grid (see occupancy); ties go to the first of upper left (the
// paper's place), upper right, lower left, lower right.
func insetRect(da vg.Rectangle, fw, fh float64, grid [][]bool) vg.Rectangle {
	pad := vg.Points(insetPad)
	w, h := vg.Length(fw)*(da.Max.X-da.Min.X), vg.Length(fh)*(da.Max.Y-da.Min.Y)
	left, right := da.Min.X+pad, da.Max.X-pad-w
	top, bottom := da.Max.Y-pad-h, da.Min.Y+pad
	var best vg.Rectangle
	bestN := -1
	for _, at := range []vg.Point{{X: left, Y: top}, {X: right, Y: top}, {X: left, Y: bottom}, {X: right, Y: bottom}} {
		r := vg.Rectangle{Min: at, Max: vg.Point{X: at.X + w, Y: at.Y + h}}
		if n := covered(da, r, grid); bestN < 0 || n < bestN {
			best, bestN = r, n
		}
	}
	return best
}

// covered counts the occupied cells of grid over da that r (the whole
// inset, its tick labels included) overlaps.
func covered(da, r vg.Rectangle, grid [][]bool) int {
	n := len(grid)
	if n == 0 {
		return 0
	}
	w, h := da.Max.X-da.Min.X, da.Max.Y-da.Min.Y
	i0 := max(0, int(math.Floor(float64((r.Min.X-da.Min.X)/w*vg.Length(n)))))
	i1 := min(n-1, int(math.Floor(float64((r.Max.X-da.Min.X)/w*vg.Length(n)))))
	j0 := max(0, int(math.Floor(float64((r.Min.Y-da.Min.Y)/h*vg.Length(n)))))
	j1 := min(n-1, int(math.Floor(float64((r.Max.Y-da.Min.Y)/h*vg.Length(n)))))
	count := 0
	for j := j0; j <= j1; j++ {
		for i := i0; i <= i1; i++ {
			if grid[j][i] {
				count++
			}
		}
	}
	return count
}

// logFloor is the smallest positive finite Mean, Lo or Hi of the panel's
// curves at points with a drawable x; it replaces non-positive band lower
// edges on a log-y axis. NaN when the panel has no positive value.
func (p panelData) logFloor() float64 {
	floor := math.Inf(1)
	for _, sc := range p.curves {
		c := sc.c
		for i, x := range c.X {
			if !xOK(x, p.spec.LogX) {
				continue
			}
			for _, v := range [3]float64{c.Mean[i], c.Lo[i], c.Hi[i]} {
				if finite(v) && v > 0 && v < floor {
					floor = v
				}
			}
		}
	}
	if math.IsInf(floor, 1) {
		return math.NaN()
	}
	return floor
}

func xOK(x float64, log bool) bool { return finite(x) && (!log || x > 0) }

// meanDrawable reports whether point i of c's mean line can be drawn on
// the given scales (see the package doc).
func meanDrawable(c Curve, i int, logX, logY bool) bool {
	return xOK(c.X[i], logX) && finite(c.Mean[i]) && (!logY || c.Mean[i] > 0)
}

// bandDrawable reports whether point i of c's band can be drawn on the
// given scales; a non-positive Lo on a log-y axis is raised to the
// panel's floor, not dropped.
func bandDrawable(c Curve, i int, logX, logY bool) bool {
	return xOK(c.X[i], logX) && finite(c.Lo[i]) && finite(c.Hi[i]) && (!logY || c.Hi[i] > 0)
}

// panelPlot is a gonum plot with the coordinates it draws, from which the
// automatic axis range is computed.
type panelPlot struct {
	*gplot.Plot
	xs, ys []float64
}

// newPlot builds a plot of curves (bands first, then mean lines, each in
// curve order) on the given scales. tickSize > 0 overrides the tick label
// font size. Points that cannot be drawn are gaps; see the package doc.
func newPlot(curves []styledCurve, logX, logY bool, floor float64, tickSize vg.Length) panelPlot {
	p := panelPlot{Plot: gplot.New()}
	p.Title.TextStyle.Handler = figureText
	for _, a := range []*gplot.Axis{&p.X, &p.Y} {
		a.Padding = 0
		a.Label.TextStyle.Handler, a.Tick.Label.Handler = figureText, figureText
		a.Tick.Marker = linearTicks{maxLabels: maxLinLabels}
		if tickSize > 0 {
			a.Tick.Label.Font.Size = tickSize
			a.Tick.Length = vg.Points(5)
			a.Tick.Marker = linearTicks{maxLabels: maxInsetLabels}
		}
	}
	if logX {
		setLog(&p.X)
	}
	if logY {
		setLog(&p.Y)
	}

	var lines []gplot.Plotter
	for _, sc := range curves {
		c := sc.c
		// Mean line: runs of consecutive drawable points.
		lineOK := func(i int) bool { return meanDrawable(c, i, logX, logY) }
		for _, r := range runs(len(c.X), lineOK) {
			xys := make(plotter.XYs, 0, r[1]-r[0])
			for i := r[0]; i < r[1]; i++ {
				xys = append(xys, plotter.XY{X: c.X[i], Y: c.Mean[i]})
				p.xs = append(p.xs, c.X[i])
				p.ys = append(p.ys, c.Mean[i])
			}
			if len(xys) == 1 {
				lines = append(lines, &plotter.Scatter{XYs: xys, GlyphStyle: draw.GlyphStyle{
					Color: sc.style.Color, Radius: vg.Points(lineWidth), Shape: draw.CircleGlyph{},
				}})
				continue
			}
			lines = append(lines, &plotter.Line{XYs: xys, LineStyle: lineStyle(sc.style.Color)})
		}

		// Band: runs of at least two consecutive drawable points.
		bandOK := func(i int) bool { return bandDrawable(c, i, logX, logY) }
		for _, r := range runs(len(c.X), bandOK) {
			if r[1]-r[0] < 2 {
				continue
			}
			ring := make(plotter.XYs, 0, 2*(r[1]-r[0]))
			for i := r[0]; i < r[1]; i++ {
				ring = append(ring, plotter.XY{X: c.X[i], Y: c.Hi[i]})
			}
			for i := r[1] - 1; i >= r[0]; i-- {
				lo := c.Lo[i]
				if logY && lo <= 0 {
					lo = floor
				}
				ring = append(ring, plotter.XY{X: c.X[i], Y: lo})
			}
			for _, xy := range ring {
				p.xs = append(p.xs, xy.X)
				p.ys = append(p.ys, xy.Y)
			}
			p.Add(&plotter.Polygon{XYs: []plotter.XYs{ring}, Color: bandColor(sc.style.Color)})
		}
	}
	p.Add(lines...)
	return p
}

// runs returns the maximal half-open index ranges [a, b) of 0..n-1 on
// which ok holds.
func runs(n int, ok func(int) bool) [][2]int {
	var out [][2]int
	start := -1
	for i := 0; i <= n; i++ {
		if i < n && ok(i) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, [2]int{start, i})
			start = -1
		}
	}
	return out
}

func setLog(a *gplot.Axis) {
	a.Scale = gplot.LogScale{}
	a.Tick.Marker = logTicks{}
}

// axisRange returns an axis' [min, max]: the range of vs padded by
// dataMargin of its span on each side (in log space on a log axis), with
// the explicit limits lo and hi taking precedence. A non-positive limit on
// a log axis is ignored. A degenerate range is widened: on a linear axis
// by 10% of |v| (1 when v = 0) each side, on a log axis to v/√10..v·√10;
// an axis without data gets [0, 1] (linear) or [1, 10] (log).
func axisRange(vs []float64, log bool, lo, hi *float64) (float64, float64) {
	tr, inv := func(v float64) float64 { return v }, func(v float64) float64 { return v }
	if log {
		tr, inv = math.Log10, func(v float64) float64 { return math.Pow(10, v) }
	}
	dmin, dmax := math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		dmin = math.Min(dmin, v)
		dmax = math.Max(dmax, v)
	}
	var mn, mx float64
	if dmin <= dmax {
		a, b := tr(dmin), tr(dmax)
		pad := dataMargin * (b - a)
		mn, mx = inv(a-pad), inv(b+pad)
	} else if log {
		mn, mx = 1, 10
	} else {
		mn, mx = 0, 1
	}
	if lo != nil && (!log || *lo > 0) {
		mn = *lo
	}
	if hi != nil && (!log || *hi > 0) {
		mx = *hi
	}
	if mn < mx {
		return mn, mx
	}
	// Degenerate: centre on an explicit limit if there is one.
	v := mn
	switch {
	case lo != nil && (!log || *lo > 0):
		v = *lo
	case hi != nil && (!log || *hi > 0):
		v = *hi
	}
	if log {
		return v / math.Sqrt(10), v * math.Sqrt(10)
	}
	d := 0.1 * math.Abs(v)
	if d == 0 {
		d = 1
	}
	return v - d, v + d
}

// drawFrame strokes the top and right edges of a data area, closing the
// box that the axes open.
func drawFrame(dc draw.Canvas) {
	dc.StrokeLines(frameStyle, []vg.Point{
		{X: dc.Min.X, Y: dc.Max.Y}, {X: dc.Max.X, Y: dc.Max.Y}, {X: dc.Max.X, Y: dc.Min.Y},
	})
}

// logTicks marks a log axis: major ticks at powers of ten and unlabelled
// minor ticks at 2..9 x 10^k. Over three decades or more, the powers of
// ten are labelled 10^k; when more than maxLogLabels decades are in range,
// only every s-th decade is (k divisible by s) and minor ticks are
// dropped. Over fewer (a horizon from 1 to 34, a d/p from 8 to 376),
// 2 x 10^k and 5 x 10^k are labelled too, unless that gives more than
// maxNarrowLogLabels labels; there labels read as plain numbers (20, 0.5)
// when every one lies in [10^-3, 10^4]. If less than a decade gets fewer
// than three labels, linear ticks are used (linearTicks, restricted to
// positive values). Every tick is inside [min, max].
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []gplot.Tick {
	in := func(v float64) bool { return v >= min*(1-1e-12) && v <= max*(1+1e-12) }
	k0 := int(math.Floor(math.Log10(min)))
	k1 := int(math.Ceil(math.Log10(max)))

	var decades []int
	for k := k0; k <= k1; k++ {
		if in(math.Pow10(k)) {
			decades = append(decades, k)
		}
	}
	var ticks []gplot.Tick
	switch {
	case len(decades) > maxLogLabels:
		s := (len(decades) + maxLogLabels - 1) / maxLogLabels
		for _, k := range decades {
			t := gplot.Tick{Value: math.Pow10(k)}
			if k%s == 0 {
				t.Label = pow10Label(1, k)
			}
			ticks = append(ticks, t)
		}
	case len(decades) >= 3:
		ticks = minorLogTicks(k0, k1, in, func(m int) bool { return m == 1 })
	default:
		ticks = minorLogTicks(k0, k1, in, func(m int) bool { return m == 1 || m == 2 || m == 5 })
		if labelCount(ticks) > maxNarrowLogLabels {
			ticks = minorLogTicks(k0, k1, in, func(m int) bool { return m == 1 })
		}
		plain := true
		for _, t := range ticks {
			plain = plain && (t.Label == "" || t.Value >= 1e-3*(1-1e-12) && t.Value <= 1e4*(1+1e-12))
		}
		for i := range ticks {
			if plain && ticks[i].Label != "" {
				ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', -1, 64)
			}
		}
		if labelCount(ticks) < 3 && len(decades) < 2 {
			ticks = ticks[:0]
			for _, t := range (linearTicks{maxLabels: maxLinLabels}).Ticks(min, max) {
				if t.Value > 0 && in(t.Value) {
					ticks = append(ticks, t)
				}
			}
		}
	}
	return ticks
}

// maxNarrowLogLabels is the most labels a log axis of fewer than three
// decades gets at 1, 2 and 5 x 10^k (logTicks).
const maxNarrowLogLabels = 6

// labelCount is the number of labelled ticks.
func labelCount(ticks []gplot.Tick) int {
	n := 0
	for _, t := range ticks {
		if t.Label != "" {
			n++
		}
	}
	return n
}

// minorLogTicks returns the ticks m x 10^k for k in [k0, k1] and m in 1..9
// that are in range, labelled where label(m) holds.
func minorLogTicks(k0, k1 int, in func(float64) bool, label func(m int) bool) []gplot.Tick {
	var ticks []gplot.Tick
	for k := k0; k <= k1; k++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow10(k)
			if !in(v) {
				continue
			}
			t := gplot.Tick{Value: v}
			if label(m) {
				t.Label = pow10Label(m, k)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// linearTicks marks a linear axis with at most maxLabels labelled ticks
// at multiples of the smallest "nice" step (1, 2, 2.5 or 5 x 10^e) that
// keeps within that number, and unlabelled minor ticks subdividing each
// step into 4 (step 2) or 5 parts. A step of 2.5 is not used for labels
// 2.5, 5.0, 7.5 (integers read better). Labels have exactly the decimals
// the step needs and a true minus sign. Every tick is inside [min, max].
type linearTicks struct{ maxLabels int }

func (t linearTicks) Ticks(vmin, vmax float64) []gplot.Tick {
	if !(vmax > vmin) || !finite(vmin) || !finite(vmax) || t.maxLabels < 2 {
		return nil
	}
	e := int(math.Floor(math.Log10((vmax - vmin) / float64(t.maxLabels))))
	var (
		step, mant float64
		exp, lo    int
		hi         int
	)
search:
	for ee := e; ee <= e+2; ee++ {
		for _, m := range []float64{1, 2, 2.5, 5} {
			if m == 2.5 && ee == 0 {
				continue // 2.5, 5.0, 7.5: prefer integer labels
			}
			st := m * math.Pow10(ee)
			l, h := int(math.Ceil(vmin/st)), int(math.Floor(vmax/st))
			if h-l+1 <= t.maxLabels {
				step, mant, exp, lo, hi = st, m, ee, l, h
				break search
			}
		}
	}
	if step == 0 {
		return nil
	}
	dec := max(0, -exp)
	if mant == 2.5 {
		dec = max(0, 1-exp)
	}
	sub := 5
	if mant == 2 {
		sub = 4
	}
	var ticks []gplot.Tick
	for i := (lo - 1) * sub; i <= (hi+1)*sub; i++ {
		v := float64(i) * step / float64(sub)
		if v < vmin || v > vmax {
			continue
		}
		tk := gplot.Tick{Value: v}
		if i%sub == 0 {
			v = float64(i/sub) * step
			tk.Value = v
			if v == 0 {
				v = 0 // no "-0"
			}
			tk.Label = strings.Replace(strconv.FormatFloat(v, 'f', dec, 64), "-", "\u2212", 1)
		}
		ticks = append(ticks, tk)
	}
	return ticks
}

// pow10Label is m x 10^k with a superscript exponent ("2×10⁻³").
func pow10Label(m, k int) string {
	e := superscript(strconv.Itoa(k))
	if m == 1 {
		return "10" + e
	}
	return strconv.Itoa(m) + "×10" + e
}

// superscript writes the digits and minus sign of s as their Unicode
// superscripts.
var superscript = strings.NewReplacer("0", "⁰", "1", "¹", "2", "²", "3", "³", "4", "⁴", "5", "⁵", "6", "⁶", "7", "⁷", "8", "⁸", "9", "⁹", "-", "⁻").Replace

// supText is text.Plain except for superscript digits and signs
// (⁰…⁹, ⁺, ⁻), which it draws as the font's own digits and signs at
// supScale of the size, raised by supRaise of the size: the Liberation
// fonts lack ⁰ and ⁹ (a PNG drew nothing for them, a browser another
// font's) and draw ⁶…⁸ with other metrics than ⁴ and ⁵. Text without
// them is drawn exactly as text.Plain draws it. Every text of a figure
// uses it (figureText).
type supText struct{ text.Plain }

const (
	supScale = 0.7
	supRaise = 0.42
)

var _ text.Handler = supText{}

// supDigits maps each superscript rune supText draws to what it draws.
var supDigits = map[rune]string{'⁰': "0", '¹': "1", '²': "2", '³': "3", '⁴': "4", '⁵': "5", '⁶': "6", '⁷': "7", '⁸': "8", '⁹': "9", '⁺': "+", '⁻': "−"}

// supRun is a stretch of a line at one size: sup is a superscript.
type supRun struct {
	s   string
	sup bool
}

// supRuns cuts a line into runs, superscripts mapped to what supText
// draws; nil where the line has none.
func supRuns(line string) []supRun {
	if !strings.ContainsFunc(line, func(r rune) bool { _, ok := supDigits[r]; return ok }) {
		return nil
	}
	var runs []supRun
	for _, r := range line {
		s, sup := supDigits[r]
		if !sup {
			s = string(r)
		}
		if n := len(runs); n > 0 && runs[n-1].sup == sup {
			runs[n-1].s += s
		} else {
			runs = append(runs, supRun{s, sup})
		}
	}
	return runs
}

// small is fnt at supScale of its size.
func small(fnt font.Font) font.Font {
	fnt.Size *= supScale
	return fnt
}

// Box implements text.Handler.
func (h supText) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	runs := supRuns(txt)
	if runs == nil {
		return h.Plain.Box(txt, fnt)
	}
	_, height, depth = h.Plain.Box("", fnt)
	for _, r := range runs {
		if !r.sup {
			w, _, _ := h.Plain.Box(r.s, fnt)
			width += w
			continue
		}
		w, sh, _ := h.Plain.Box(r.s, small(fnt))
		width, height = width+w, max(height, fnt.Size*supRaise+sh)
	}
	return width, height, depth
}

// Draw implements text.Handler, laying out lines as text.Plain does.
func (h supText) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	txt = strings.TrimRight(txt, "\n")
	if supRuns(strings.ReplaceAll(txt, "\n", " ")) == nil {
		h.Plain.Draw(c, txt, sty, pt)
		return
	}
	fnt := h.Fonts.Lookup(sty.Font, sty.Font.Size)
	sfnt := h.Fonts.Lookup(small(sty.Font), sty.Font.Size*supScale)
	c.SetColor(sty.Color)
	if sty.Rotation != 0 {
		c.Push()
		defer c.Pop()
		c.Rotate(sty.Rotation)
	}
	sin64, cos64 := math.Sincos(sty.Rotation)
	sin, cos := vg.Length(sin64), vg.Length(cos64)
	pt.X, pt.Y = pt.Y*sin+pt.X*cos, pt.Y*cos-pt.X*sin
	lines := h.Lines(txt)
	pt.Y += sty.Height(txt)*vg.Length(sty.YAlign) - fnt.Extents().Ascent
	for i, line := range lines {
		w, _, _ := h.Box(line, sty.Font)
		at := pt.Add(vg.Point{X: vg.Length(sty.XAlign) * w, Y: vg.Length(len(lines)-i) * sty.Font.Size})
		runs := supRuns(line)
		if runs == nil {
			runs = []supRun{{s: line}}
		}
		for _, r := range runs {
			if r.sup {
				c.FillString(sfnt, vg.Point{X: at.X, Y: at.Y + sty.Font.Size*supRaise}, r.s)
				at.X += sfnt.Width(r.s)
				continue
			}
			c.FillString(fnt, at, r.s)
			at.X += fnt.Width(r.s)
		}
	}
}
