package plot

import (
	"fmt"
	"image/color"
	"strings"
	"testing"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// fillCanvas records what is drawn: each string, its font size and where.
type fillCanvas struct {
	vg.Canvas // anything else panics: supText draws strings only
	fills     []string
}

func (c *fillCanvas) SetColor(color.Color) {}

func (c *fillCanvas) FillString(f font.Face, pt vg.Point, s string) {
	c.fills = append(c.fills, fmt.Sprintf("%q@%.1f(%.2f,%.2f)", s, f.Font.Size.Points(), pt.X.Points(), pt.Y.Points()))
}

// Superscript digits are drawn as the font's own digits at 0.7 of the
// size, raised by 0.42 of it, after the text before them (the Liberation
// fonts lack ⁰ and ⁹); text without them is drawn as text.Plain draws it,
// line by line.
func TestSupText(t *testing.T) {
	plain := text.Plain{Fonts: font.DefaultCache}
	sty := textStyle(10, 0, 0) // left, bottom
	fnt := plain.Fonts.Lookup(sty.Font, 10)
	sfnt := plain.Fonts.Lookup(small(sty.Font), 7)

	if got := supRuns("cap: 2·10⁻⁴ samples ⁹"); fmt.Sprint(got) != "[{cap: 2·10 false} {−4 true} { samples  false} {9 true}]" {
		t.Errorf("runs: %v", got)
	}
	for _, s := range []string{"no superscript", "a\nb", "x^2"} {
		w, h, d := figureText.Box(s, sty.Font)
		pw, ph, pd := plain.Box(s, sty.Font)
		if w != pw || h != ph || d != pd {
			t.Errorf("%q: box (%v, %v, %v), text.Plain's (%v, %v, %v)", s, w, h, d, pw, ph, pd)
		}
	}
	w, h, _ := figureText.Box("10⁶ s", sty.Font)
	if want := fnt.Width("10") + sfnt.Width("6") + fnt.Width(" s"); w != want {
		t.Errorf("width of 10⁶ s: %v, want %v", w, want)
	}
	if want := max(fnt.Extents().Ascent, 10*supRaise+sfnt.Extents().Ascent); h != vg.Length(want) {
		t.Errorf("height of 10⁶ s: %v, want %v", h, want)
	}

	var c fillCanvas
	figureText.Draw(&c, "10⁶ s", sty, vg.Point{X: 100, Y: 50})
	base := 50 - fnt.Extents().Ascent + 10 // text.Plain's baseline, bottom-aligned
	want := []string{
		fmt.Sprintf("%q@10.0(100.00,%.2f)", "10", base.Points()),
		fmt.Sprintf("%q@7.0(%.2f,%.2f)", "6", (100 + fnt.Width("10")).Points(), (base + 4.2).Points()),
		fmt.Sprintf("%q@10.0(%.2f,%.2f)", " s", (100 + fnt.Width("10") + sfnt.Width("6")).Points(), base.Points()),
	}
	if fmt.Sprint(c.fills) != fmt.Sprint(want) {
		t.Errorf("drawn:\n%v\nwant\n%v", c.fills, want)
	}
	// Two lines: each laid out as text.Plain lays out its lines.
	c.fills = nil
	figureText.Draw(&c, "a⁹\nb", sty, vg.Point{X: 0, Y: 0})
	var p fillCanvas
	plain.Draw(&p, "a9\nb", sty, vg.Point{X: 0, Y: 0})
	if len(c.fills) != 3 || len(p.fills) != 2 || c.fills[0] != strings.Replace(p.fills[0], `"a9"`, `"a"`, 1) || c.fills[2] != p.fills[1] {
		t.Errorf("two lines: %v, text.Plain's %v", c.fills, p.fills)
	}
}
