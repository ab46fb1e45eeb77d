package plot

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot/vg"
)

// Series is one seed's curve: the values Y logged at the grid X.
type Series struct {
	Panel, Curve string
	Seed         uint64
	X, Y         []float64
}

// Band selects how Aggregate computes the shaded band around the mean.
type Band string

const (
	// BandMinMaxStd is mean ± population std (ddof 0), clipped elementwise
	// to [min, max] across seeds. The one-step plots (MNIST, linear
	// regression) use it, as the authors' code did.
	BandMinMaxStd Band = "minmax-std"

	// BandStdErr is mean ± population std / √n, n the number of seeds. The
	// multi-step plots (MuJoCo, LQR) use it, as the authors' code did.
	BandStdErr Band = "stderr"
)

// Caption returns a caption fragment that states what the band is, e.g.
// "band: mean ± population std across 10 seeds, clipped to [min, max]".
// It returns "" for an unknown band.
func (b Band) Caption(nSeeds int) string {
	switch b {
	case BandMinMaxStd:
		return fmt.Sprintf("band: mean ± population std across %d seeds, clipped to [min, max]", nSeeds)
	case BandStdErr:
		return fmt.Sprintf("band: mean ± standard error (population std / √%d) across %d seeds", nSeeds, nSeeds)
	}
	return ""
}

// Curve is the aggregate of the seeds of one (Panel, Curve) group: the mean
// and the band [Lo, Hi] at each grid point X, over N seeds.
type Curve struct {
	Panel, Curve string
	X, Mean      []float64
	Lo, Hi       []float64
	N            int
}

// Spec describes a figure: panels tiled left to right, one legend for the
// whole figure, and a caption under the panels.
type Spec struct {
	// Title is drawn centred above the panels; empty means none.
	Title string

	// Panels are drawn left to right (in rows of Columns) in this order.
	// Every panel must receive at least one curve.
	Panels []PanelSpec

	// Curves gives the legend order, labels and colours. Within a panel
	// curves are drawn in this order too (later ones on top). A style that
	// no panel uses is left out of the legend.
	Curves []CurveStyle

	// Caption is drawn under the legend, word-wrapped to the figure width;
	// "\n" starts a new paragraph. It is required and must say what the
	// band is (see Band.Caption).
	Caption string

	// Columns is the most panels in a row: the panels fill rows left to
	// right, top to bottom (six bodies as two rows of three). Zero puts
	// every panel in one row.
	Columns int

	// Width and Height are the whole figure's size. Zero Width means
	// DefaultPanelWidth per panel of a row; zero Height means
	// DefaultPanelHeight per row of panels plus whatever the title,
	// legend and caption need.
	Width, Height vg.Length

	// Inset, when non-nil, draws a zoomed copy of a panel's curves in the
	// upper-left corner of its data area.
	Inset *InsetSpec
}

// PanelSpec describes one panel (one set of axes).
type PanelSpec struct {
	// Key matches Curve.Panel.
	Key string

	// Title is drawn above the panel; XLabel and YLabel label its axes.
	Title, XLabel, YLabel string

	// LogX and LogY select a base-10 log scale with decade ticks. See the
	// package documentation for how non-positive values are treated.
	LogX, LogY bool

	// XMin, XMax, YMin, YMax fix the axis limits; nil means the data range
	// (mean line and band). A non-positive limit on a log axis is ignored.
	XMin, XMax, YMin, YMax *float64

	// HLines are reference lines across the panel (e.g. a budget cap),
	// drawn dashed in gray with their label; the y range includes them.
	HLines []HLine

	// Guides are reference curves (e.g. a theorem's bound on a curve),
	// drawn dashed in their colour with their label at their right end;
	// the y range includes them.
	Guides []Guide

	// Notes name vertical bars the panel draws (the scaling view's body
	// names); they do not widen the axis ranges.
	Notes []Note
}

// Note names the vertical bar from Lo to Hi at X: its text goes above
// the bar, else below it, else beside it, wherever it overlaps neither
// another note nor another noted bar and stays inside the data area.
type Note struct {
	X, Lo, Hi float64
	Text      string
	// Marks are marks drawn across the bar (the scaling view's tick at
	// its crossover point), each spanning [X0, X1] at Y: the text keeps
	// clear of them where it can, as of the panel's guides.
	Marks []Mark
}

// Mark is a horizontal mark across a noted bar.
type Mark struct{ X0, X1, Y float64 }

// Guide is a labelled reference curve: y against x, not data.
type Guide struct {
	Label string
	Color color.Color
	X, Y  []float64
	// InLegend names the guide in the legend (a dashed line in its
	// colour) instead of beside its line, where a label would cross
	// what the panel draws (the scaling view's bars).
	InLegend bool
}

// HLine is a labelled horizontal reference line.
type HLine struct {
	Y     float64
	Label string
}

// CurveStyle gives a curve's legend label and colour. The mean line is
// drawn in Color; the band in the same colour at a quarter of its opacity.
type CurveStyle struct {
	Key   string // matches Curve.Curve
	Label string // legend text
	Color color.Color
	// NoBand: the curve has no band, and its legend entry shows none.
	NoBand bool
	// dashed: a legend entry for a Guide (InLegend), drawn dashed.
	dashed bool
}

// InsetSpec describes a zoomed inset drawn in the upper-left corner of a
// panel's data area, over an opaque white background, with the panel's
// axis scales and curves but the limits given here (Fig. 3a/3b: H = 1..5,
// y in [0, 2]).
type InsetSpec struct {
	// Panel is the key of the panel that gets the inset; "" means every
	// panel.
	Panel string

	// The inset's axis limits. Both pairs are required and must be finite
	// with Min < Max (and positive on a log axis).
	XMin, XMax, YMin, YMax float64

	// Width and Height are fractions of the panel's data area in (0, 1];
	// zero means DefaultInsetFraction.
	Width, Height float64
}

// Layout defaults.
const (
	// PNGDPI is the resolution of the PNG that Render writes: twice a
	// screen's 96, so that a figure stays sharp on a high-density display
	// and when zoomed (806 pixels wide for a one-panel figure).
	PNGDPI = 192

	// DefaultPanelWidth and DefaultPanelHeight size each panel when
	// Spec.Width or Spec.Height is zero.
	DefaultPanelWidth  = 4 * vg.Inch
	DefaultPanelHeight = 3.5 * vg.Inch

	// DefaultInsetFraction is the inset's default width and height as a
	// fraction of the panel's data area.
	DefaultInsetFraction = 0.42
)
