package report

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"maps"
	"regexp"
	"slices"

	"codeberg.org/go-fonts/liberation/liberationserifregular"

	"zorepro/stages/report/webfont"
)

// The figures are laid out by gonum/plot with Liberation Serif's metrics
// and their SVG text asks for that family. The page carries the font
// itself, cut down to the characters its figures draw and renamed
// (webfont.Subset; the SIL Open Font License reserves the name
// Liberation for unmodified fonts), so that the figures render the same
// on a machine without the font as with it.
const (
	plotFamily   = "font-family:Liberation Serif;"
	figureFamily = "Figure Serif"
	fontCredit   = "The figures' text is set in " + figureFamily + ", a subset of Liberation Serif (© Red Hat, Inc., SIL Open Font License 1.1) embedded in this page."
)

// figureSVGs are one figure's SVG documents as the page inlines them: the
// figure, and its companion views by companionViews (nil: none).
type figureSVGs struct {
	main  []byte
	views [][]byte
}

// pageSVGs inlines every figure's SVGs, their text set in figureFamily.
func pageSVGs(figs []*Figure) map[*Figure]figureSVGs {
	out := make(map[*Figure]figureSVGs, len(figs))
	for _, f := range figs {
		s := figureSVGs{main: inlineFigure(f.svg), views: make([][]byte, len(f.views))}
		for i, v := range f.views {
			if v != nil {
				s.views[i] = inlineFigure(v)
			}
		}
		out[f] = s
	}
	return out
}

func inlineFigure(svg []byte) []byte {
	return bytes.ReplaceAll(inlineSVG(svg), []byte(plotFamily), []byte("font-family:"+figureFamily+";"))
}

var svgText = regexp.MustCompile(`(?s)<text[^>]*>(.*?)</text>`)

// fontFace is the page's @font-face rule for figureFamily: Liberation
// Serif cut down to the characters of the figures' text.
func fontFace(svgs map[*Figure]figureSVGs) string {
	seen := map[rune]bool{}
	for _, s := range svgs {
		for _, doc := range append([][]byte{s.main}, s.views...) {
			for _, m := range svgText.FindAllSubmatch(doc, -1) {
				for _, r := range html.UnescapeString(string(m[1])) {
					seen[r] = true
				}
			}
		}
	}
	runes := slices.Sorted(maps.Keys(seen))
	ttf, err := webfont.Subset(liberationserifregular.TTF, string(runes), figureFamily)
	if err != nil {
		panic(fmt.Sprintf("report: the figures' font: %v", err)) // the font is compiled in: a defect, not input
	}
	return fmt.Sprintf("@font-face{font-family:%q;src:url(data:font/ttf;base64,%s) format(\"truetype\")}", figureFamily, base64.StdEncoding.EncodeToString(ttf))
}
