package plot

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

var update = flag.Bool("update", false, "rewrite testdata/*_golden.{png,svg}")

// goldenGOARCH is the architecture the golden files were made on. The
// rasteriser's floating point may round differently elsewhere (fused
// multiply-add), so other architectures only check run-to-run identity.
const goldenGOARCH = "amd64"

var (
	red  = color.NRGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	blue = color.NRGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
)

func ptr(x float64) *float64 { return &x }

// linregFixture is a small Fig. 2 look-alike: two log-x panels (the
// second also log-y), two curves, three seeds, min-max-std bands. The grid
// starts at x = 0, which the log axis skips, and two seeds log a zero loss
// at x = 500, which puts a band's lower edge at 0 on the log-y panel (drawn
// down to the panel's smallest positive value).
func linregFixture() (Spec, []Series) {
	rng := rand.New(rand.NewPCG(1, 2))
	xs := []float64{0, 100, 200, 500, 1000, 2000, 5000, 1e4, 2e4, 5e4, 1e5, 2e5, 3e5}
	var series []Series
	for _, panel := range []string{"d=10", "d=100"} {
		for ci, curve := range []string{"ars", "reinforce"} {
			rate := []float64{3e3, 4e4}[ci]
			for seed := uint64(1); seed <= 3; seed++ {
				y := make([]float64, len(xs))
				for i, x := range xs {
					y[i] = (0.05 + 2/(1+x/rate)) * (1 + 0.5*(rng.Float64()-0.5))
				}
				if panel == "d=100" && curve == "reinforce" && seed >= 2 {
					y[3] = 0
				}
				series = append(series, Series{Panel: panel, Curve: curve, Seed: seed, X: xs, Y: y})
			}
		}
	}
	spec := Spec{
		Title: "Linear regression with input dimensionality d",
		Panels: []PanelSpec{
			{Key: "d=10", Title: "d = 10", XLabel: "samples", YLabel: "test squared loss",
				LogX: true, XMin: ptr(0), XMax: ptr(3e5)},
			{Key: "d=100", Title: "d = 100", XLabel: "samples", YLabel: "test squared loss (log)",
				LogX: true, LogY: true, XMin: ptr(0), XMax: ptr(3e5)},
		},
		Curves: []CurveStyle{
			{Key: "ars", Label: "ARS", Color: red},
			{Key: "reinforce", Label: "REINFORCE", Color: blue},
		},
		Caption: "Test loss against samples, mean over 3 seeds; " + BandMinMaxStd.Caption(3) +
			". The x = 0 point is not drawn on the log axis.",
	}
	return spec, series
}

// mujocoFixture is a small Fig. 3a/3b look-alike: return against horizon,
// standard-error bands, and an inset on every panel showing H = 1..5 with
// y in [0, 2].
func mujocoFixture() (Spec, []Series) {
	rng := rand.New(rand.NewPCG(3, 4))
	var xs []float64
	for h := 1; h <= 15; h++ {
		xs = append(xs, float64(h))
	}
	var series []Series
	for pi, panel := range []string{"swimmer", "halfcheetah"} {
		for ci, curve := range []string{"ars", "exact"} {
			for seed := uint64(1); seed <= 3; seed++ {
				y := make([]float64, len(xs))
				for i, h := range xs {
					base := []float64{0.05 * math.Pow(h, 2.5), 0.4 * h}[ci] * float64(1+pi)
					y[i] = base * (1 + 0.4*(rng.Float64()-0.5))
				}
				series = append(series, Series{Panel: panel, Curve: curve, Seed: seed, X: xs, Y: y})
			}
		}
	}
	spec := Spec{
		Panels: []PanelSpec{
			{Key: "swimmer", Title: "Swimmer-v2", XLabel: "horizon H", YLabel: "Mean Return"},
			{Key: "halfcheetah", Title: "HalfCheetah-v2", XLabel: "horizon H", YLabel: "Mean Return"},
		},
		Curves: []CurveStyle{
			{Key: "ars", Label: "ARS", Color: red},
			{Key: "exact", Label: "ExAct", Color: blue},
		},
		Caption: "Mean return against horizon; " + BandStdErr.Caption(3) + ". Inset: H = 1..5.",
		Inset:   &InsetSpec{XMin: 1, XMax: 5, YMin: 0, YMax: 2},
	}
	return spec, series
}

func renderFixture(t *testing.T, spec Spec, series []Series, band Band) (png, svg []byte) {
	t.Helper()
	curves, err := Aggregate(series, band)
	if err != nil {
		t.Fatal(err)
	}
	png, svg, err = Render(spec, curves)
	if err != nil {
		t.Fatal(err)
	}
	return png, svg
}

func TestRenderGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		fix  func() (Spec, []Series)
		band Band
	}{
		{"linreg", linregFixture, BandMinMaxStd},
		{"inset", mujocoFixture, BandStdErr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, series := tc.fix()
			png1, svg1 := renderFixture(t, spec, series, tc.band)
			png2, svg2 := renderFixture(t, spec, series, tc.band)
			if !bytes.Equal(png1, png2) || !bytes.Equal(svg1, svg2) {
				t.Fatal("two renders of the same figure differ")
			}
			for _, f := range []struct {
				ext string
				b   []byte
			}{{"png", png1}, {"svg", svg1}} {
				path := filepath.Join("testdata", tc.name+"_golden."+f.ext)
				if *update {
					if runtime.GOARCH != goldenGOARCH {
						t.Fatalf("golden files belong to GOARCH %s, this is %s", goldenGOARCH, runtime.GOARCH)
					}
					if err := os.WriteFile(path, f.b, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if runtime.GOARCH != goldenGOARCH {
					t.Skipf("golden files are for GOARCH %s", goldenGOARCH)
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (regenerate with go test ./stages/plot -update)", err)
				}
				if !bytes.Equal(f.b, want) {
					t.Errorf("%s differs from the golden file (%d vs %d bytes); inspect and regenerate with -update",
						path, len(f.b), len(want))
				}
			}
		})
	}
}

func TestRenderSizeAndFormats(t *testing.T) {
	spec, series := linregFixture()
	spec.Width, spec.Height = 8*vg.Inch, 4*vg.Inch
	pngB, svgB := renderFixture(t, spec, series, BandMinMaxStd)
	img, err := png.Decode(bytes.NewReader(pngB))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 8*PNGDPI || b.Dy() != 4*PNGDPI {
		t.Fatalf("PNG is %dx%d, want %dx%d", b.Dx(), b.Dy(), 8*PNGDPI, 4*PNGDPI)
	}
	s := string(svgB)
	if !strings.HasPrefix(s, "<?xml") || !strings.Contains(s, `width="576pt" height="288pt"`) {
		t.Fatalf("unexpected SVG header: %.200s", s)
	}
	for _, txt := range []string{"REINFORCE", "d = 100", "clipped", "samples"} {
		if !strings.Contains(s, txt) {
			t.Errorf("SVG lacks text %q", txt)
		}
	}
}

// Columns lays the panels out in rows: five panels in rows of three are a
// figure three panels wide and two rows (and a row gap) tall, every
// panel drawn; a negative number of columns is refused.
func TestPanelGrid(t *testing.T) {
	spec, series := linregFixture()
	base := spec.Panels[0]
	spec.Panels = nil
	var all []Series
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		p := base
		p.Key, p.Title = k, "panel "+k
		spec.Panels = append(spec.Panels, p)
		for _, s := range series {
			if s.Panel == "d=10" {
				s.Panel = k
				all = append(all, s)
			}
		}
	}
	size := func(spec Spec) (w, h int, svg string) {
		pngB, svgB := renderFixture(t, spec, all, BandMinMaxStd)
		img, err := png.Decode(bytes.NewReader(pngB))
		if err != nil {
			t.Fatal(err)
		}
		return img.Bounds().Dx(), img.Bounds().Dy(), string(svgB)
	}
	w1, h1, _ := size(spec)
	spec.Columns = 3
	w3, h3, svg := size(spec)
	px := func(l vg.Length) int { return int(math.Round(float64(l) / 72 * PNGDPI)) }
	if want := px(3*DefaultPanelWidth + 2*margin); w3 != want || w1 != px(5*DefaultPanelWidth+2*margin) {
		t.Errorf("widths: %d in one row, %d in rows of 3; want %d and %d", w1, w3, px(5*DefaultPanelWidth+2*margin), want)
	}
	if d := h3 - h1; d != px(DefaultPanelHeight+rowGap) && d != px(DefaultPanelHeight+rowGap)+1 && d != px(DefaultPanelHeight+rowGap)-1 {
		t.Errorf("heights: %d in one row, %d in two; the second row should add %d", h1, h3, px(DefaultPanelHeight+rowGap))
	}
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		if !strings.Contains(svg, "panel "+k) {
			t.Errorf("the grid lacks panel %s", k)
		}
	}
	spec.Columns = -1
	if _, _, err := Render(spec, nil); !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), "negative number of columns") {
		t.Errorf("columns -1: %v", err)
	}
}

// A guide named in the legend (InLegend) gets one dashed legend entry
// after the curves, however many panels draw it, and no label beside its
// line; a guide without it stays out of the legend.
func TestGuideInLegend(t *testing.T) {
	spec, series := linregFixture()
	curves, err := Aggregate(series, BandMinMaxStd)
	if err != nil {
		t.Fatal(err)
	}
	g := Guide{Label: "slope 0.5 (theory)", Color: red, X: []float64{100, 1e5}, Y: []float64{1, 2}, InLegend: true}
	spec.Panels[0].Guides = []Guide{g}
	spec.Panels[1].Guides = []Guide{g, {Label: "bound", Color: blue, X: []float64{100, 1e5}, Y: []float64{1, 2}}}
	f, err := newFigure(spec, curves)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, s := range f.legend {
		labels = append(labels, fmt.Sprintf("%s dashed=%v", s.Label, s.dashed))
	}
	if got, want := strings.Join(labels, "; "), "ARS dashed=false; REINFORCE dashed=false; slope 0.5 (theory) dashed=true"; got != want {
		t.Errorf("legend %q, want %q", got, want)
	}
	_, svg, err := Render(spec, curves)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(svg), "slope 0.5 (theory)"); n != 1 {
		t.Errorf("the guide's label is drawn %d times, want once (the legend)", n)
	}
}

func TestRenderConcurrent(t *testing.T) {
	spec, series := mujocoFixture()
	want, _ := renderFixture(t, spec, series, BandStdErr)
	var wg sync.WaitGroup
	got := make([][]byte, 4)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			curves, err := Aggregate(series, BandStdErr)
			if err != nil {
				t.Error(err)
				return
			}
			got[i], _, err = Render(spec, curves)
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i, g := range got {
		if !bytes.Equal(g, want) {
			t.Errorf("goroutine %d rendered different bytes", i)
		}
	}
}

// TestRenderUndrawableValues feeds every kind of value the log rules drop
// and checks that Render neither fails nor panics.
func TestRenderUndrawableValues(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	curves := []Curve{
		{Panel: "p", Curve: "a", N: 2,
			X:    []float64{-1, 0, 1, 10, 100, 1000, 1e4},
			Mean: []float64{1, 2, -3, nan, 5, 0.5, inf},
			Lo:   []float64{0, 1, -4, 1, -1, 0.1, 1},
			Hi:   []float64{2, 3, -2, nan, 6, 1, inf}},
		{Panel: "q", Curve: "a", N: 1, // nothing positive at all
			X: []float64{1, 2}, Mean: []float64{-1, -2}, Lo: []float64{-1, -2}, Hi: []float64{-1, -2}},
		{Panel: "r", Curve: "a", N: 1, // a single point
			X: []float64{5}, Mean: []float64{5}, Lo: []float64{5}, Hi: []float64{5}},
	}
	spec := Spec{
		Panels: []PanelSpec{
			{Key: "p", LogX: true, LogY: true, YMin: ptr(-1)},
			{Key: "q", LogX: true, LogY: true},
			{Key: "r", LogX: true, LogY: true},
		},
		Curves:  []CurveStyle{{Key: "a", Label: "A", Color: red}},
		Caption: BandStdErr.Caption(2),
		Inset:   &InsetSpec{Panel: "p", XMin: 1, XMax: 100, YMin: 0.1, YMax: 10, Width: 0.5, Height: 0.3},
	}
	if _, _, err := Render(spec, curves); err != nil {
		t.Fatal(err)
	}
	for i := range spec.Panels {
		spec.Panels[i].LogX, spec.Panels[i].LogY = false, false
	}
	if _, _, err := Render(spec, curves); err != nil {
		t.Fatal(err)
	}
}

func TestRenderBadSpec(t *testing.T) {
	spec, series := linregFixture()
	curves, err := Aggregate(series, BandMinMaxStd)
	if err != nil {
		t.Fatal(err)
	}
	spec.Caption = ""
	spec.Panels = append(spec.Panels, PanelSpec{Key: "empty", XMin: ptr(2), XMax: ptr(1)})
	spec.Curves = spec.Curves[:1]
	spec.Inset = &InsetSpec{Panel: "nope", XMin: 1, XMax: 1, YMin: 0, YMax: 1}
	curves = append(curves, Curve{Panel: "ghost", Curve: "ars"})
	_, _, err = Render(spec, curves)
	if !errors.Is(err, ErrBadSpec) {
		t.Fatalf("err = %v, want ErrBadSpec", err)
	}
	msg := err.Error()
	for _, s := range []string{
		"empty caption",
		`panel "empty": x limits [2, 1] are not increasing`,
		`curve "reinforce" has no CurveStyle`,
		`unknown panel "ghost"`,
		`panel "empty" has no curves`,
		`inset: unknown panel "nope"`,
		"inset: x limits [1, 1]",
	} {
		if !strings.Contains(msg, s) {
			t.Errorf("error lacks %q:\n%s", s, msg)
		}
	}

	spec, _ = linregFixture()
	spec.Height = 1 * vg.Inch
	if _, _, err := Render(spec, curves[:4]); !errors.Is(err, ErrBadSpec) {
		t.Fatalf("tiny figure: err = %v", err)
	}
}

func TestLogTicks(t *testing.T) {
	labels := func(min, max float64) (out []string) {
		for _, tk := range (logTicks{}).Ticks(min, max) {
			if tk.Value < min || tk.Value > max {
				t.Errorf("[%g, %g]: tick %g outside", min, max, tk.Value)
			}
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	for _, tc := range []struct {
		min, max float64
		want     string
	}{
		{80, 3.5e5, "10² 10³ 10⁴ 10⁵"},
		// Fewer than three decades: plain numbers where they are short,
		// at 1, 2 and 5 x 10^k unless that crowds the axis.
		{0.002, 0.9, "0.01 0.1"},
		{0.15, 3, "0.2 0.5 1 2"},
		{0.9, 38, "1 2 5 10 20"},
		{15, 200, "20 50 100 200"},
		{5.3, 564, "10 20 50 100 200 500"},
		{2e4, 9e5, "2×10⁴ 5×10⁴ 10⁵ 2×10⁵ 5×10⁵"},
		{1e-10, 1e10, "10⁻⁹ 10⁻⁶ 10⁻³ 10⁰ 10³ 10⁶ 10⁹"},
		{1.1, 1.9, "1.2 1.4 1.6 1.8"},
		// Less than a decade with only two 1-2-5 marks in it (the quick
		// profile's average regret at d = 10): read off linear ticks.
		{0.035, 0.1, "0.04 0.06 0.08 0.10"},
	} {
		if got := strings.Join(labels(tc.min, tc.max), " "); got != tc.want {
			t.Errorf("[%g, %g]: labels %q, want %q", tc.min, tc.max, got, tc.want)
		}
	}
}

func TestLinearTicks(t *testing.T) {
	for _, tc := range []struct {
		min, max float64
		n        int
		want     string
	}{
		{0.44, 15.56, 6, "5 10 15"},
		{-0.1, 2.6, 6, "0.0 0.5 1.0 1.5 2.0 2.5"},
		{1, 5, 5, "1 2 3 4 5"},
		{0, 2, 5, "0.0 0.5 1.0 1.5 2.0"},
		{-3e5, 1e6, 6, "−250000 0 250000 500000 750000 1000000"},
		{0.01, 0.99, 3, "0.25 0.50 0.75"},
	} {
		var got []string
		for _, tk := range (linearTicks{maxLabels: tc.n}).Ticks(tc.min, tc.max) {
			if tk.Value < tc.min || tk.Value > tc.max {
				t.Errorf("[%g, %g]: tick %g outside", tc.min, tc.max, tk.Value)
			}
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("[%g, %g] n=%d: labels %q, want %q", tc.min, tc.max, tc.n, g, tc.want)
		}
	}
}

// The inset goes where it hides the least: upper left as in the paper
// when that corner is empty; another corner when a curve runs through the
// upper left (the quick profile's HalfCheetah, whose returns at H = 1..7
// sat behind the upper-left inset).
func TestInsetAvoidsData(t *testing.T) {
	da := vg.Rectangle{Max: vg.Point{X: 300, Y: 200}}
	corner := func(xs, ys []float64) string {
		c := Curve{X: xs, Mean: ys, Lo: ys, Hi: ys}
		p := panelData{spec: PanelSpec{Key: "p"}, curves: []styledCurve{{c: c, style: CurveStyle{Key: "c", Color: red}}}}
		pl := newPlot(p.curves, false, false, math.NaN(), 0)
		pl.X.Min, pl.X.Max = axisRange(pl.xs, false, nil, nil)
		pl.Y.Min, pl.Y.Max = axisRange(pl.ys, false, nil, nil)
		dc := draw.Canvas{Rectangle: da}
		r := insetRect(da, DefaultInsetFraction, DefaultInsetFraction, p.occupancy(pl, dc, math.NaN()))
		v := map[bool]string{true: "upper", false: "lower"}[r.Max.Y > da.Max.Y/2]
		return v + map[bool]string{true: " left", false: " right"}[r.Min.X < da.Max.X/2]
	}
	for _, tc := range []struct {
		name   string
		xs, ys []float64
		want   string
	}{
		{"rising, as Swimmer", []float64{1, 5, 10, 15}, []float64{0, 1, 5, 13}, "upper left"},
		{"falling", []float64{1, 15}, []float64{10, 0}, "upper right"},
		{"high then low, as the quick HalfCheetah", []float64{1, 3, 6, 10, 14, 15}, []float64{4, 4, 4, 0, -6, 3}, "lower left"},
		{"everywhere but the lower right", []float64{1, 2, 8, 14, 15}, []float64{0, 10, 10, 10, 10}, "lower right"},
	} {
		if got := corner(tc.xs, tc.ys); got != tc.want {
			t.Errorf("%s: inset at %s, want %s", tc.name, got, tc.want)
		}
	}
}

// An inset keeps the paper's y limits unless a curve within its x limits
// would leave them: then they widen to the data with a 5% margin (issue
// 28: HalfCheetah's ARS at H = 5, 2.04, was clipped by the paper's [0, 2]).
func TestInsetYLimitsWidenToTheData(t *testing.T) {
	in := &InsetSpec{XMin: 1, XMax: 5, YMin: 0, YMax: 2}
	panel := func(ys ...float64) panelData {
		xs := []float64{1, 3, 5, 10}
		return panelData{curves: []styledCurve{{c: Curve{X: xs, Mean: ys, Lo: ys, Hi: ys}}}}
	}
	if lo, hi := panel(0.5, 1, 1.5, 40).insetYLimits(in, false); lo != 0 || hi != 2 {
		t.Errorf("data inside: [%v, %v], want the spec's [0, 2] (x = 10 is outside the inset)", lo, hi)
	}
	if lo, hi := panel(0.5, 1, 2.04, 40).insetYLimits(in, false); lo != 0 || math.Abs(hi-(2.04+0.05*2.04)) > 1e-12 {
		t.Errorf("2.04 at x = 5: [%v, %v], want [0, 2.142]", lo, hi)
	}
	if lo, _ := panel(-1, 1, 1, 1).insetYLimits(in, false); math.Abs(lo-(-1-0.05*3)) > 1e-12 {
		t.Errorf("−1 at x = 1: lower limit %v, want −1.15", lo)
	}
}

// Cap labels write budgets as powers of ten.
func TestSciText(t *testing.T) {
	for x, want := range map[float64]string{1e6: "10⁶", 20000: "2·10⁴", 500: "500", 1.5e5: "1.5·10⁵"} {
		if got := sciText(x); got != want {
			t.Errorf("sciText(%v) = %q, want %q", x, got, want)
		}
	}
}

// A title wider than the figure is wrapped to its width (the olr-regret
// title ran 29 points past both edges of its 403-point figure), and no
// word of it is lost.
func TestRenderWrapsALongTitle(t *testing.T) {
	spec, series := linregFixture()
	spec.Width = 3 * vg.Inch
	spec.Title = "Online linear regression with partial information (Theorem 1), a title longer than the figure is wide"
	curves, err := Aggregate(series, BandMinMaxStd)
	if err != nil {
		t.Fatal(err)
	}
	f, err := newFigure(spec, curves)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(f.title, "\n")
	if len(lines) < 2 {
		t.Fatalf("title not wrapped: %q", f.title)
	}
	for _, l := range lines {
		if w := titleStyle.Width(l); w > spec.Width-2*margin {
			t.Errorf("title line %q is %v wide, the figure's inner width %v", l, w, spec.Width-2*margin)
		}
	}
	if strings.Join(strings.Fields(f.title), " ") != spec.Title {
		t.Errorf("wrapped title %q lost words of %q", f.title, spec.Title)
	}
	if one := titleStyle.Height(spec.Title) + gap; f.titleH <= one {
		t.Errorf("title height %v leaves room for one line (%v)", f.titleH, one)
	}
}

// A guide (a theorem's bound) is drawn with its label, and the panel's y
// range reaches it: a bound far above the data widens the axis to it
// rather than leaving the page.
func TestRenderGuides(t *testing.T) {
	spec, series := linregFixture()
	spec.Panels = spec.Panels[1:] // d=100: log x and log y
	spec.Panels[0].Guides = []Guide{
		{Label: "Alg. 1's bound", Color: red, X: []float64{100, 1e4, 3e5}, Y: []float64{500, 150, 60}},
		{Label: "Alg. 2's bound", Color: blue, X: []float64{100, 1e4, 3e5}, Y: []float64{400, 120, 50}},
	}
	var kept []Series
	for _, s := range series {
		if s.Panel == spec.Panels[0].Key {
			kept = append(kept, s)
		}
	}
	curves, err := Aggregate(kept, BandMinMaxStd)
	if err != nil {
		t.Fatal(err)
	}
	f, err := newFigure(spec, curves)
	if err != nil {
		t.Fatal(err)
	}
	_, svg, err := Render(spec, curves)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"Alg. 1&#39;s bound", "Alg. 2&#39;s bound"} {
		if !strings.Contains(string(svg), l) {
			t.Errorf("SVG lacks the guide label %q", l)
		}
	}
	// The y range takes in the guides (the data stay below 3): all their
	// values on this log axis, and on a linear one too.
	ys := f.panels[0].referenceYs()
	if len(ys) != 6 || slices.Max(ys) != 500 {
		t.Errorf("reference y values %v, want the guides' six with 500 the largest", ys)
	}
	f.panels[0].spec.Guides[0].Y[2] = -1 // not drawable on a log axis
	if ys := f.panels[0].referenceYs(); len(ys) != 5 {
		t.Errorf("a non-positive guide value on a log axis kept: %v", ys)
	}
}

// polylineY interpolates along a polyline and holds its ends beyond them.
func TestPolylineY(t *testing.T) {
	pts := []vg.Point{{X: 0, Y: 10}, {X: 10, Y: 0}, {X: 20, Y: 5}}
	for _, tc := range []struct{ x, y vg.Length }{{-5, 10}, {0, 10}, {5, 5}, {10, 0}, {15, 2.5}, {25, 5}} {
		if got := polylineY(pts, tc.x); got != tc.y {
			t.Errorf("polylineY(%v) = %v, want %v", tc.x, got, tc.y)
		}
	}
}

// The log companion's axis starts one decade below a panel's lowest mean
// when a band reaches further down (Newton's min-max band at d = 10 went
// to 10^-17), and where the data stay above that it is left to the data.
func TestLogCompanionCutsDeepBands(t *testing.T) {
	s := Spec{Panels: []PanelSpec{{Key: "10"}, {Key: "100"}}}
	curves := []Curve{
		{Panel: "10", Curve: "newton", X: []float64{1, 2}, Mean: []float64{1e-6, 2e-6}, Lo: []float64{1e-17, 1e-9}, Hi: []float64{2e-6, 3e-6}},
		{Panel: "100", Curve: "newton", X: []float64{1, 2}, Mean: []float64{1e-3, 2e-3}, Lo: []float64{5e-4, 1e-3}, Hi: []float64{2e-3, 3e-3}},
	}
	c := logCompanion(s, curves)
	if p := c.Panels[0]; !p.LogY || p.YMin == nil || math.Abs(*p.YMin-1e-7) > 1e-20 {
		t.Errorf("panel 10: log %v, y from %v; want 1e-7", p.LogY, p.YMin)
	}
	if p := c.Panels[1]; !p.LogY || p.YMin != nil {
		t.Errorf("panel 100 (its band stays within a decade): y from %v, want the data's", *p.YMin)
	}
	if !strings.Contains(c.Caption, "bands reaching lower are cut there") {
		t.Errorf("caption %q does not say the bands are cut", c.Caption)
	}
}

// Notes go above their bars where there is room; a note that would cover
// another note or cross another bar goes below its bar, or beside it,
// higher or lower along it; one that would leave the data area goes where
// it stays inside; where every place crosses a bar, one that covers no
// other note.
func TestPlaceNotes(t *testing.T) {
	area := box{vg.Point{X: 0, Y: 0}, vg.Point{X: 200, Y: 100}}
	bar := func(x, lo, hi vg.Length) box { return box{vg.Point{X: x - 1, Y: lo}, vg.Point{X: x + 1, Y: hi}} }
	size := vg.Point{X: 30, Y: 10}
	cases := []struct {
		name string
		bars []box
		want []vg.Point // each note's lower left corner
	}{
		{"alone: centred above", []box{bar(100, 20, 60)}, []vg.Point{{X: 85, Y: 63}}},
		{"two close bars: the second below", []box{bar(100, 20, 60), bar(110, 20, 60)}, []vg.Point{{X: 85, Y: 63}, {X: 95, Y: 7}}},
		{"no room above or below: right of its middle", []box{bar(100, 20, 60), bar(110, 20, 60), bar(150, 10, 90)}, []vg.Point{{X: 85, Y: 63}, {X: 95, Y: 7}, {X: 154, Y: 45}}},
		{"left where the right would leave the area", []box{bar(190, 10, 90)}, []vg.Point{{X: 156, Y: 45}}},
		{"no room above: below", []box{bar(100, 20, 95)}, []vg.Point{{X: 85, Y: 7}}},
		{"at the left edge: starting at the bar", []box{bar(5, 20, 60)}, []vg.Point{{X: 2, Y: 63}}},
	}
	for _, c := range cases {
		sizes := make([]vg.Point, len(c.bars))
		for i := range sizes {
			sizes[i] = size
		}
		got := placeNotes(c.bars, sizes, area, nil)
		for i, w := range c.want {
			if got[i].min != w || got[i].max != (vg.Point{X: w.X + 30, Y: w.Y + 10}) {
				t.Errorf("%s: note %d at %v, want %v", c.name, i, got[i], w)
			}
		}
		for i := range got {
			for j := range i {
				if got[i].overlaps(got[j]) {
					t.Errorf("%s: notes %d and %d overlap", c.name, j, i)
				}
			}
		}
	}
	// Nowhere free of bars (a third bar between two named ones): right of
	// its middle, across the next bar but over no other note.
	got := placeNotes([]box{bar(100, 20, 60), bar(110, 20, 60), bar(105, 20, 60)}, []vg.Point{size, size, size}, area, nil)
	if got[2].min != (vg.Point{X: 109, Y: 35}) {
		t.Errorf("nowhere free: note at %v, want right of its bar at (109, 35)", got[2])
	}
	// A guide through the place above the bar (the scaling view's theory
	// line, which passes through every tick): the note goes below; a
	// guide through every place: the first free of bars, across it.
	line := []vg.Point{{X: 0, Y: 60}, {X: 200, Y: 80}}
	if got := placeNotes([]box{bar(100, 20, 60)}, []vg.Point{size}, area, [][]vg.Point{line}); got[0].min != (vg.Point{X: 85, Y: 7}) {
		t.Errorf("a guide above the bar: note at %v, want below at (85, 7)", got[0].min)
	}
	var everywhere [][]vg.Point
	for _, x := range []vg.Length{70, 90, 100, 110, 130} {
		everywhere = append(everywhere, []vg.Point{{X: x, Y: 0}, {X: x, Y: 100}})
	}
	if got := placeNotes([]box{bar(100, 20, 60)}, []vg.Point{size}, area, everywhere); got[0].min != (vg.Point{X: 85, Y: 63}) {
		t.Errorf("guides everywhere: note at %v, want above at (85, 63)", got[0].min)
	}
	// A segment that ends short of a box does not cross it; one along an
	// edge inside it does.
	b := box{vg.Point{X: 10, Y: 10}, vg.Point{X: 20, Y: 20}}
	for _, c := range []struct {
		pts  []vg.Point
		want bool
	}{
		{[]vg.Point{{X: 0, Y: 0}, {X: 9, Y: 9}}, false},
		{[]vg.Point{{X: 0, Y: 0}, {X: 30, Y: 30}}, true},
		{[]vg.Point{{X: 0, Y: 15}, {X: 5, Y: 15}, {X: 15, Y: 27}}, false},
		{[]vg.Point{{X: 0, Y: 15}, {X: 5, Y: 15}, {X: 15, Y: 15}}, true},
		{[]vg.Point{{X: 15, Y: 0}, {X: 15, Y: 30}}, true},
		{[]vg.Point{{X: 25, Y: 0}, {X: 25, Y: 30}}, false},
	} {
		if got := b.crosses(c.pts); got != c.want {
			t.Errorf("%v crosses %v: %v, want %v", c.pts, b, got, c.want)
		}
	}
	// Full-height bars close together (every bracket open, as the quick
	// profile's three bodies gave): no room above or below; the first
	// note left of its bar, the second across a bar, the third right of
	// its bar one line higher, clear of the second.
	got = placeNotes([]box{bar(50, 0, 100), bar(55, 0, 100), bar(60, 0, 100)}, []vg.Point{size, size, size}, area, nil)
	for i, w := range []vg.Point{{X: 16, Y: 45}, {X: 59, Y: 45}, {X: 64, Y: 58}} {
		if got[i].min != w {
			t.Errorf("full-height bars: note %d at %v, want %v", i, got[i].min, w)
		}
		for j := range i {
			if got[i].overlaps(got[j]) {
				t.Errorf("full-height bars: notes %d and %d overlap", j, i)
			}
		}
	}
	// The same bars with a guide across their middles (the quick
	// profile's theory line ran through HalfCheetah's name, placed across
	// Hopper's bar): each note one line higher or lower, off the guide,
	// the second still across a bar but over no note and off the guide.
	mid := [][]vg.Point{{{X: 0, Y: 50}, {X: 200, Y: 50}}}
	got = placeNotes([]box{bar(50, 0, 100), bar(55, 0, 100), bar(60, 0, 100)}, []vg.Point{size, size, size}, area, mid)
	for i, w := range []vg.Point{{X: 16, Y: 58}, {X: 59, Y: 58}, {X: 64, Y: 32}} {
		if got[i].min != w {
			t.Errorf("full-height bars, a guide across: note %d at %v, want %v", i, got[i].min, w)
		}
		if got[i].crosses(mid[0]) {
			t.Errorf("full-height bars, a guide across: note %d crosses it", i)
		}
	}
}

// A reference line's label goes to the first free end of the line (right
// above, right below, left above, left below), else to the end that
// crosses the fewest curves, and never outside the frame but where it
// cannot fit at all (Fig. 3c's cap, which the noisiest runs reach on the
// right, is labelled on the left).
func TestHLineLabelAt(t *testing.T) {
	frame := box{vg.Point{X: 0, Y: 0}, vg.Point{X: 200, Y: 100}}
	size := vg.Point{X: 40, Y: 8}
	// rising runs from 10 at x = 0 to top at x = 200, band ±band.
	rising := func(top, band vg.Length) []span {
		var sp []span
		for x := vg.Length(0); x <= 200; x += 20 {
			m := 10 + (top-10)*x/200
			sp = append(sp, span{x: x, lo: m - band, hi: m + band})
		}
		return sp
	}
	flatLeft := []span{{x: 0, lo: 60, hi: 99}, {x: 60, lo: 60, hi: 99}}
	cases := []struct {
		name   string
		y      vg.Length
		curves [][]span
		want   vg.Point // the label's lower left corner
	}{
		{"no curves: right above", 80, nil, vg.Point{X: 157, Y: 82}},
		{"the curve below the line: right above", 80, [][]span{rising(70, 2)}, vg.Point{X: 157, Y: 82}},
		{"the curve reaches the line on the right: left above", 80, [][]span{rising(80, 10)}, vg.Point{X: 3, Y: 82}},
		{"no room above, the right taken: left below", 95, [][]span{rising(95, 10)}, vg.Point{X: 3, Y: 85}},
		{"both ends taken: the one crossing fewer", 80, [][]span{rising(80, 10), flatLeft}, vg.Point{X: 157, Y: 82}},
	}
	for _, c := range cases {
		got := hlineLabelAt(frame, c.y, size, c.curves)
		if got.min != c.want || got.max != (vg.Point{X: c.want.X + size.X, Y: c.want.Y + size.Y}) {
			t.Errorf("%s: label at %v, want %v", c.name, got, c.want)
		}
	}
	// A frame too small for the label: above the line's right end.
	if got := hlineLabelAt(box{vg.Point{}, vg.Point{X: 30, Y: 100}}, 50, size, nil); got.min != (vg.Point{X: -13, Y: 52}) {
		t.Errorf("no room: label at %v", got)
	}
}
