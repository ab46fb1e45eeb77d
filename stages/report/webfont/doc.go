// Package webfont cuts a TrueType font down to the glyphs a page draws
// and renames it, so that the page can carry, in a few tens of kilobytes,
// the font its figures were laid out with.
//
// The figures' SVG text is placed by gonum/plot with Liberation Serif's
// metrics. A browser without that font substitutes another, wider one and
// the text overflows the boxes it was measured for. A page that embeds the
// font (an @font-face rule with a data: URL) renders the same on every
// machine, because a family the page defines wins over any installed font.
//
// # What Subset keeps
//
// Every table of the font except three is kept byte for byte, so that
// widths (hmtx), kerning (kern, GPOS) and hinting (cvt, fpgm, prep) are the
// original's. The changes:
//   - glyf and loca: the outlines of the glyphs the text's characters map
//     to (through cmap), the glyphs their composite outlines are built from
//     and .notdef; every other glyph keeps its index and width and has no
//     outline;
//   - post: version 3 (no glyph names, which only printing tools use);
//   - name: the family, full and PostScript names are the caller's, since
//     the SIL Open Font License reserves the original's name (Liberation)
//     for unmodified fonts; the copyright, version and license strings are
//     kept;
//   - GSUB is dropped: its substitutions (Liberation Serif's ccmp and
//     dlig) lead to glyphs the text does not name, which the subset has
//     no outline for.
//
// Table checksums and head's checkSumAdjustment are recomputed. The result
// depends only on the font's bytes, the set of characters and the family
// name: the same inputs give the same bytes.
package webfont
