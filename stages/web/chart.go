package web

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"

	"zorepro/pipeline/task"
)

// chart is a line chart drawn as inline SVG by the server: the learning
// curves of a task page and the clickable points of a figure page.
type chart struct {
	Title          string
	XLabel, YLabel string
	LogX, LogY     bool
	Series         []series
}

// series is one line; a point with an Href is drawn as a link.
type series struct {
	Name   string
	Color  string
	Points []point
	// Band, when set, is drawn as a shaded polygon (Lo..Hi at each x).
	Band bool
}

type point struct {
	X, Y, Lo, Hi float64
	Href         string
	Tip          string
}

// palette colours the series in order.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"}

const (
	chartW, chartH         = 640, 300
	padL, padR, padT, padB = 72, 36, 24, 40 // room for a tick label half past the frame on the right, a long one ("-1.2×10⁶") on the left
	legendRow              = 16
)

// svg draws the chart. Non-finite values and values a log axis cannot
// show are left out.
func (c chart) svg() template.HTML {
	tr := func(v float64, log bool) (float64, bool) {
		if math.IsNaN(v) || math.IsInf(v, 0) || log && v <= 0 {
			return 0, false
		}
		if log {
			return math.Log10(v), true
		}
		return v, true
	}
	x0, x1, y0, y1 := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for _, p := range s.Points {
			x, okx := tr(p.X, c.LogX)
			if !okx {
				continue
			}
			for _, yv := range []float64{p.Y, p.Lo, p.Hi} {
				if !s.Band && yv != p.Y {
					continue
				}
				if y, ok := tr(yv, c.LogY); ok {
					x0, x1, y0, y1 = math.Min(x0, x), math.Max(x1, x), math.Min(y0, y), math.Max(y1, y)
				}
			}
		}
	}
	h := chartH + legendRow*len(c.Series)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d">`, chartW, h, chartW, h)
	if c.Title != "" {
		fmt.Fprintf(&b, `<text x="%d" y="16" font-size="13" font-weight="bold">%s</text>`, padL, template.HTMLEscapeString(c.Title))
	}
	if x0 > x1 {
		b.WriteString(`<text x="80" y="120" font-size="13">no finite values to draw</text></svg>`)
		return template.HTML(b.String())
	}
	if x0 == x1 {
		x0, x1 = x0-0.5, x1+0.5
	}
	if y0 == y1 {
		y0, y1 = y0-0.5, y1+0.5
	}
	pw, ph := float64(chartW-padL-padR), float64(chartH-padT-padB)
	px := func(x float64) float64 { return padL + (x-x0)/(x1-x0)*pw }
	py := func(y float64) float64 { return padT + (y1-y)/(y1-y0)*ph }
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%g" height="%g" fill="none" stroke="#888"/>`, padL, padT, pw, ph)
	for _, t := range ticks(x0, x1, c.LogX) {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%g" y2="%g" stroke="#888"/><text x="%.1f" y="%g" font-size="11" text-anchor="middle">%s</text>`,
			px(t.at), px(t.at), padT+ph, padT+ph+4, px(t.at), padT+ph+16, t.svg())
	}
	for _, t := range ticks(y0, y1, c.LogY) {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#888"/><text x="%d" y="%.1f" font-size="11" text-anchor="end">%s</text>`,
			padL-4, padL, py(t.at), py(t.at), padL-6, py(t.at)+4, t.svg())
	}
	fmt.Fprintf(&b, `<text x="%g" y="%d" font-size="12" text-anchor="middle">%s</text>`, padL+pw/2, chartH-6, template.HTMLEscapeString(c.XLabel))
	fmt.Fprintf(&b, `<text x="14" y="%g" font-size="12" text-anchor="middle" transform="rotate(-90 14 %g)">%s</text>`, padT+ph/2, padT+ph/2, template.HTMLEscapeString(c.YLabel))
	for i, s := range c.Series {
		col := s.Color
		if col == "" {
			col = palette[i%len(palette)]
		}
		var line, lo, hi []string
		for _, p := range s.Points {
			x, okx := tr(p.X, c.LogX)
			y, oky := tr(p.Y, c.LogY)
			if !okx || !oky {
				continue
			}
			line = append(line, fmt.Sprintf("%.1f,%.1f", px(x), py(y)))
			if s.Band {
				l, okl := tr(p.Lo, c.LogY)
				u, oku := tr(p.Hi, c.LogY)
				if okl && oku {
					lo, hi = append(lo, fmt.Sprintf("%.1f,%.1f", px(x), py(l))), append(hi, fmt.Sprintf("%.1f,%.1f", px(x), py(u)))
				}
			}
		}
		if len(lo) > 1 {
			for j := len(hi) - 1; j >= 0; j-- {
				lo = append(lo, hi[j])
			}
			fmt.Fprintf(&b, `<polygon points="%s" fill="%s" fill-opacity="0.18" stroke="none"/>`, strings.Join(lo, " "), col)
		}
		if len(line) > 1 {
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5"/>`, strings.Join(line, " "), col)
		}
		for _, p := range s.Points {
			if p.Href == "" {
				continue
			}
			x, okx := tr(p.X, c.LogX)
			y, oky := tr(p.Y, c.LogY)
			if !okx || !oky {
				continue
			}
			fmt.Fprintf(&b, `<a href="%s" class="pt"><circle cx="%.1f" cy="%.1f" r="4" fill="%s"><title>%s</title></circle></a>`,
				template.HTMLEscapeString(p.Href), px(x), py(y), col, template.HTMLEscapeString(p.Tip))
		}
		ly := chartH + legendRow*i + 4
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="3"/><text x="%d" y="%d" font-size="12">%s</text>`,
			padL, padL+24, ly+6, ly+6, col, padL+30, ly+10, template.HTMLEscapeString(s.Name))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

type tick struct {
	at    float64 // in axis units (log10 on a log axis)
	label string
	sup   string // an exponent raised after label (a decade: "10", "-3")
}

// svg is the tick's label as SVG text content: the exponent raised and
// smaller, as the figures write 10⁻³ (a tspan, not Unicode superscripts,
// which some fonts lack).
func (t tick) svg() string {
	if t.sup == "" {
		return t.label
	}
	return t.label + `<tspan dy="-5" font-size="8">` + strings.Replace(t.sup, "-", "−", 1) + `</tspan>`
}

// ticks are about five round values between lo and hi (decades on a log
// axis).
func ticks(lo, hi float64, log bool) []tick {
	var out []tick
	if log && hi-lo < 2 {
		// Less than two decades (a horizon grid of 1 to 8, say): 1, 2 and
		// 5 in each, as plain numbers.
		for e := math.Floor(lo); e <= math.Ceil(hi); e++ {
			for _, m := range []float64{1, 2, 5} {
				v := m * math.Pow(10, e)
				if at := math.Log10(v); at >= lo-1e-9 && at <= hi+1e-9 {
					label, sup := tickLabel(v, v)
					out = append(out, tick{at: at, label: label, sup: sup})
				}
			}
		}
		return out
	}
	if log {
		step := math.Max(1, math.Ceil((hi-lo)/6))
		for e := math.Ceil(lo); e <= hi; e += step {
			out = append(out, tick{at: e, label: "10", sup: task.FormatFloat(e)})
		}
		return out
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * mag; step >= raw {
			break
		}
	}
	for i := math.Ceil(lo / step); i*step <= hi+step*1e-9; i++ {
		v := i*step + 0 // no -0
		label, sup := tickLabel(v, step)
		out = append(out, tick{at: v, label: label, sup: sup})
	}
	return out
}

// tickLabel writes a linear axis's tick at v (ticks step apart) as plain
// decimals, at most as many places as the step needs and no trailing
// zeros ("15000", "0.25", "0.5"); far from 1 (from 10^6, or below 10^-4
// but 0) as the figures write it, a power of ten with its exponent
// raised: the label "2×10" and the exponent "6" (2×10⁶; 10⁶ for 1e6),
// never Go's "1.5e+04".
func tickLabel(v, step float64) (label, sup string) {
	if a := math.Abs(v); a == 0 || (a < 1e6 && a >= 1e-4) {
		places := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
		return trimZeros(strconv.FormatFloat(v, 'f', places, 64)), ""
	}
	prec := max(0, int(math.Floor(math.Log10(math.Abs(v))+1e-9)-math.Floor(math.Log10(step)+1e-9)))
	mant, exp, _ := strings.Cut(strconv.FormatFloat(v, 'e', prec, 64), "e")
	mant = trimZeros(mant)
	sign, digits := "", strings.TrimPrefix(exp, "+")
	if d, neg := strings.CutPrefix(digits, "-"); neg {
		sign, digits = "-", d
	}
	switch mant {
	case "1":
		label = "10"
	case "-1":
		label = "-10"
	default:
		label = mant + "×10"
	}
	return label, sign + strings.TrimLeft(digits, "0")
}

// trimZeros drops the trailing zeros of a decimal fraction, and its
// point if nothing follows ("0.50" → "0.5", "2.0" → "2"; "100" stays).
func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	return strings.TrimRight(strings.TrimRight(s, "0"), ".")
}

// downsample keeps at most max points of a series, evenly spaced, always
// the first and the last; it says whether it dropped any.
func downsample[T any](xs []T, max int) ([]T, bool) {
	if len(xs) <= max {
		return xs, false
	}
	out := make([]T, 0, max)
	for i := 0; i < max; i++ {
		out = append(out, xs[i*(len(xs)-1)/(max-1)])
	}
	return out, true
}
