package webfont

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"codeberg.org/go-fonts/liberation/liberationserifregular"
	"golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// The figures' text: ASCII, a minus sign, Greek, superscripts and an
// accented letter, whose glyph in Liberation Serif is composite.
const figureText = "Return vs samples (Swimmer, H = 1000) 10⁴ 10³ −0.5 ±1 σ ν α √p ≥ é"

func parse(t *testing.T, ttf []byte) *sfnt.Font {
	t.Helper()
	f, err := sfnt.Parse(ttf)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// A subset draws the text's characters exactly as the original font does
// (the same glyph index, advance and outline) and nothing else: a glyph
// the text does not use has no outline; its family is the name given.
func TestSubsetKeepsTheTextsGlyphsOnly(t *testing.T) {
	orig := liberationserifregular.TTF
	sub, err := Subset(orig, figureText, "Figure Serif")
	if err != nil {
		t.Fatal(err)
	}
	if len(sub)*4 > len(orig) {
		t.Errorf("subset is %d bytes, the font %d: expected under a quarter", len(sub), len(orig))
	}
	fo, fs := parse(t, orig), parse(t, sub)
	var bo, bs sfnt.Buffer
	ppem := fixed.I(10)
	load := func(f *sfnt.Font, b *sfnt.Buffer, r rune) (sfnt.GlyphIndex, fixed.Int26_6, sfnt.Segments) {
		t.Helper()
		g, err := f.GlyphIndex(b, r)
		if err != nil {
			t.Fatal(err)
		}
		adv, err := f.GlyphAdvance(b, g, ppem, font.HintingNone)
		if err != nil {
			t.Fatal(err)
		}
		segs, err := f.LoadGlyph(b, g, ppem, nil)
		if err != nil {
			t.Fatalf("%q: %v", r, err)
		}
		return g, adv, slicesClone(segs)
	}
	for _, r := range figureText {
		g1, a1, s1 := load(fo, &bo, r)
		g2, a2, s2 := load(fs, &bs, r)
		if g1 == 0 {
			t.Fatalf("%q is not in the font: the test text should use the font's characters", r)
		}
		if g1 != g2 || a1 != a2 || !equalSegments(s1, s2) {
			t.Errorf("%q: glyph %d advance %v, %d segments in the font; %d, %v, %d in the subset", r, g1, a1, len(s1), g2, a2, len(s2))
		}
	}
	for _, r := range "QZ@&" {
		_, a1, s1 := load(fo, &bo, r)
		_, a2, s2 := load(fs, &bs, r)
		if len(s1) == 0 || len(s2) != 0 || a1 != a2 {
			t.Errorf("%q, not in the text: %d segments in the font, %d in the subset (want none), advances %v and %v", r, len(s1), len(s2), a1, a2)
		}
	}
	for id, want := range map[sfnt.NameID]string{sfnt.NameIDFamily: "Figure Serif", sfnt.NameIDPostScript: "FigureSerif-Regular"} {
		got, err := fs.Name(&bs, id)
		if err != nil || got != want {
			t.Errorf("name %d: %q, %v; want %q", id, got, err, want)
		}
	}
	if lic, err := fs.Name(&bs, sfnt.NameIDLicense); err != nil || !bytes.Contains([]byte(lic), []byte("Open Font License")) {
		t.Errorf("license string not kept: %q, %v", lic, err)
	}
}

// The composite é is built from other glyphs: the subset of "é" alone
// keeps them (é draws as in the font), although the text names none.
func TestSubsetKeepsCompositeComponents(t *testing.T) {
	orig := liberationserifregular.TTF
	f := parse(t, orig)
	var b sfnt.Buffer
	g, _ := f.GlyphIndex(&b, 'é')
	tables, err := readTables(orig)
	if err != nil {
		t.Fatal(err)
	}
	numGlyphs := int(binary.BigEndian.Uint16(tables["maxp"][4:]))
	offsets, err := readLoca(tables["loca"], numGlyphs, binary.BigEndian.Uint16(tables["head"][50:]) == 1)
	if err != nil {
		t.Fatal(err)
	}
	if contours := int16(binary.BigEndian.Uint16(tables["glyf"][offsets[g]:])); contours >= 0 {
		t.Fatalf("é is a simple glyph (%d contours) in this font: pick a composite one", contours)
	}
	sub, err := Subset(orig, "é", "F")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := f.LoadGlyph(&b, g, fixed.I(10), nil)
	want = slicesClone(want)
	var bs sfnt.Buffer
	got, err := parse(t, sub).LoadGlyph(&bs, g, fixed.I(10), nil)
	if err != nil || !equalSegments(got, want) {
		t.Errorf("é in the subset: %d segments (%v), want %d", len(got), err, len(want))
	}
}

// The checksums are those OpenType defines: every table's, and the whole
// font summing to 0xB1B0AFBA; the same inputs give the same bytes.
func TestSubsetChecksumsAndDeterminism(t *testing.T) {
	sub, err := Subset(liberationserifregular.TTF, figureText, "Figure Serif")
	if err != nil {
		t.Fatal(err)
	}
	if s := checksum(sub); s != 0xB1B0AFBA {
		t.Errorf("font checksum %#x, want 0xB1B0AFBA", s)
	}
	n := int(binary.BigEndian.Uint16(sub[4:]))
	for i := range n {
		rec := sub[12+16*i:]
		tag := string(rec[:4])
		off, length := binary.BigEndian.Uint32(rec[8:]), binary.BigEndian.Uint32(rec[12:])
		data := slicesClone(sub[off : off+length])
		if tag == "head" {
			binary.BigEndian.PutUint32(data[8:], 0)
		}
		if got := checksum(data); got != binary.BigEndian.Uint32(rec[4:]) {
			t.Errorf("table %s: checksum %#x, directory says %#x", tag, got, binary.BigEndian.Uint32(rec[4:]))
		}
		if tag == "GSUB" {
			t.Error("GSUB kept: its substitutions lead to glyphs the subset has no outline for")
		}
	}
	again, _ := Subset(liberationserifregular.TTF, figureText, "Figure Serif")
	if !bytes.Equal(sub, again) {
		t.Error("two subsets of the same inputs differ")
	}
}

func TestSubsetRefusesMalformedFonts(t *testing.T) {
	ttf := liberationserifregular.TTF
	for name, data := range map[string][]byte{
		"empty":      nil,
		"not a font": []byte("<svg xmlns='http://www.w3.org/2000/svg'/>"),
		"cut short":  ttf[:len(ttf)/2],
		"directory":  ttf[:40],
	} {
		if _, err := Subset(data, "abc", "F"); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

func slicesClone[T any](s []T) []T { return append([]T(nil), s...) }

func equalSegments(a, b sfnt.Segments) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
