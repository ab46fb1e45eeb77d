package webfont

import (
	"encoding/binary"
	"fmt"
	"slices"
	"unicode/utf16"

	"golang.org/x/image/font/sfnt"
)

// Subset returns ttf cut down to the glyphs that the characters of text
// need, named family (see the package documentation for what changes).
func Subset(ttf []byte, text string, family string) ([]byte, error) {
	tables, err := readTables(ttf)
	if err != nil {
		return nil, err
	}
	for _, tag := range []string{"head", "maxp", "loca", "glyf", "cmap", "name", "post"} {
		if _, ok := tables[tag]; !ok {
			return nil, fmt.Errorf("%w: no %s table", ErrMalformed, tag)
		}
	}
	keep, err := glyphsOf(ttf, text)
	if err != nil {
		return nil, err
	}
	head := tables["head"]
	if len(head) < 54 || len(tables["maxp"]) < 6 || len(tables["post"]) < 32 {
		return nil, fmt.Errorf("%w: head, maxp or post too short", ErrMalformed)
	}
	long := binary.BigEndian.Uint16(head[50:]) == 1
	numGlyphs := int(binary.BigEndian.Uint16(tables["maxp"][4:]))
	offsets, err := readLoca(tables["loca"], numGlyphs, long)
	if err != nil {
		return nil, err
	}
	glyf := tables["glyf"]
	if int(offsets[numGlyphs]) > len(glyf) {
		return nil, fmt.Errorf("%w: loca points past glyf's %d bytes", ErrMalformed, len(glyf))
	}
	outline := func(g int) []byte { return glyf[offsets[g]:offsets[g+1]] }
	if err := addComponents(keep, numGlyphs, outline); err != nil {
		return nil, err
	}

	var newGlyf []byte
	newOffsets := make([]uint32, numGlyphs+1)
	for g := range numGlyphs {
		newOffsets[g] = uint32(len(newGlyf))
		if keep[g] {
			newGlyf = append(newGlyf, outline(g)...)
			for len(newGlyf)%4 != 0 {
				newGlyf = append(newGlyf, 0)
			}
		}
	}
	newOffsets[numGlyphs] = uint32(len(newGlyf))
	tables["glyf"] = newGlyf
	tables["loca"] = writeLoca(newOffsets, long)

	post := slices.Clone(tables["post"][:32])
	binary.BigEndian.PutUint32(post, 0x00030000)
	tables["post"] = post

	name, err := rename(tables["name"], family)
	if err != nil {
		return nil, err
	}
	tables["name"] = name
	delete(tables, "GSUB")
	tables["head"] = slices.Clone(head)
	return writeFont(binary.BigEndian.Uint32(ttf), tables), nil
}

// readTables returns each table's bytes by tag.
func readTables(ttf []byte) (map[string][]byte, error) {
	if len(ttf) < 12 {
		return nil, fmt.Errorf("%w: %d bytes", ErrMalformed, len(ttf))
	}
	if v := binary.BigEndian.Uint32(ttf); v != 0x00010000 && v != 0x74727565 {
		return nil, fmt.Errorf("%w: not a TrueType font (version %#08x)", ErrMalformed, v)
	}
	n := int(binary.BigEndian.Uint16(ttf[4:]))
	if len(ttf) < 12+16*n {
		return nil, fmt.Errorf("%w: table directory cut short", ErrMalformed)
	}
	tables := make(map[string][]byte, n)
	for i := range n {
		rec := ttf[12+16*i:]
		tag := string(rec[:4])
		off, length := uint64(binary.BigEndian.Uint32(rec[8:])), uint64(binary.BigEndian.Uint32(rec[12:]))
		if off+length > uint64(len(ttf)) {
			return nil, fmt.Errorf("%w: table %s runs past the end", ErrMalformed, tag)
		}
		tables[tag] = ttf[off : off+length]
	}
	return tables, nil
}

// glyphsOf marks .notdef and the glyph each character of text maps to.
func glyphsOf(ttf []byte, text string) (map[int]bool, error) {
	f, err := sfnt.Parse(ttf)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	var buf sfnt.Buffer
	keep := map[int]bool{0: true}
	for _, r := range text {
		g, err := f.GlyphIndex(&buf, r)
		if err != nil {
			return nil, fmt.Errorf("%w: cmap: %v", ErrMalformed, err)
		}
		keep[int(g)] = true
	}
	return keep, nil
}

func readLoca(loca []byte, numGlyphs int, long bool) ([]uint32, error) {
	size := 2
	if long {
		size = 4
	}
	if len(loca) < size*(numGlyphs+1) {
		return nil, fmt.Errorf("%w: loca has %d bytes for %d glyphs", ErrMalformed, len(loca), numGlyphs)
	}
	offsets := make([]uint32, numGlyphs+1)
	for i := range offsets {
		if long {
			offsets[i] = binary.BigEndian.Uint32(loca[4*i:])
		} else {
			offsets[i] = 2 * uint32(binary.BigEndian.Uint16(loca[2*i:]))
		}
		if i > 0 && offsets[i] < offsets[i-1] {
			return nil, fmt.Errorf("%w: loca decreases at glyph %d", ErrMalformed, i)
		}
	}
	return offsets, nil
}

func writeLoca(offsets []uint32, long bool) []byte {
	var out []byte
	for _, o := range offsets {
		if long {
			out = binary.BigEndian.AppendUint32(out, o)
		} else {
			out = binary.BigEndian.AppendUint16(out, uint16(o/2))
		}
	}
	return out
}

// Composite glyph flags (the OpenType glyf table).
const (
	argsAreWords  = 0x0001
	haveScale     = 0x0008
	moreComponent = 0x0020
	haveXYScale   = 0x0040
	haveTwoByTwo  = 0x0080
)

// addComponents adds to keep the glyphs that kept composite glyphs are
// built from, recursively.
func addComponents(keep map[int]bool, numGlyphs int, outline func(int) []byte) error {
	todo := make([]int, 0, len(keep))
	for g := range keep {
		todo = append(todo, g)
	}
	for len(todo) > 0 {
		g := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if g >= numGlyphs {
			return fmt.Errorf("%w: glyph %d of %d", ErrMalformed, g, numGlyphs)
		}
		data := outline(g)
		if len(data) < 10 || int16(binary.BigEndian.Uint16(data)) >= 0 {
			continue
		}
		for p := 10; ; {
			if p+4 > len(data) {
				return fmt.Errorf("%w: composite glyph %d cut short", ErrMalformed, g)
			}
			flags := binary.BigEndian.Uint16(data[p:])
			c := int(binary.BigEndian.Uint16(data[p+2:]))
			if c >= numGlyphs {
				return fmt.Errorf("%w: glyph %d names component %d of %d", ErrMalformed, g, c, numGlyphs)
			}
			if !keep[c] {
				keep[c] = true
				todo = append(todo, c)
			}
			p += 4 + 2
			if flags&argsAreWords != 0 {
				p += 2
			}
			switch {
			case flags&haveScale != 0:
				p += 2
			case flags&haveXYScale != 0:
				p += 4
			case flags&haveTwoByTwo != 0:
				p += 8
			}
			if flags&moreComponent == 0 {
				break
			}
		}
	}
	return nil
}

// Name IDs (the OpenType name table).
const (
	nameCopyright  = 0
	nameFamily     = 1
	nameSubfamily  = 2
	nameUnique     = 3
	nameFull       = 4
	nameVersion    = 5
	namePostScript = 6
	nameLicense    = 13
	nameLicenseURL = 14
)

// rename writes a name table (Windows platform, Unicode, US English) that
// names the font family and keeps the original's copyright, version and
// license strings.
func rename(orig []byte, family string) ([]byte, error) {
	old, err := windowsNames(orig)
	if err != nil {
		return nil, err
	}
	ps := make([]rune, 0, len(family))
	for _, r := range family {
		if r > ' ' && r < 0x7f && r != '(' && r != ')' && r != '[' && r != ']' && r != '{' && r != '}' && r != '<' && r != '>' && r != '/' && r != '%' {
			ps = append(ps, r)
		}
	}
	names := map[uint16]string{
		nameFamily:     family,
		nameSubfamily:  "Regular",
		nameUnique:     family + " (subset)",
		nameFull:       family,
		namePostScript: string(ps) + "-Regular",
	}
	for _, id := range []uint16{nameCopyright, nameVersion, nameLicense, nameLicenseURL} {
		if s, ok := old[id]; ok {
			names[id] = s
		}
	}
	ids := make([]uint16, 0, len(names))
	for id := range names {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var records, storage []byte
	for _, id := range ids {
		var s []byte
		for _, u := range utf16.Encode([]rune(names[id])) {
			s = binary.BigEndian.AppendUint16(s, u)
		}
		for _, v := range []uint16{3, 1, 0x409, id, uint16(len(s)), uint16(len(storage))} {
			records = binary.BigEndian.AppendUint16(records, v)
		}
		storage = append(storage, s...)
	}
	out := binary.BigEndian.AppendUint16(nil, 0)
	out = binary.BigEndian.AppendUint16(out, uint16(len(ids)))
	out = binary.BigEndian.AppendUint16(out, uint16(6+len(records)))
	return append(append(out, records...), storage...), nil
}

// windowsNames returns the Windows/Unicode/US English strings of a name
// table by name ID.
func windowsNames(name []byte) (map[uint16]string, error) {
	if len(name) < 6 {
		return nil, fmt.Errorf("%w: name table of %d bytes", ErrMalformed, len(name))
	}
	count := int(binary.BigEndian.Uint16(name[2:]))
	storage := int(binary.BigEndian.Uint16(name[4:]))
	if len(name) < 6+12*count {
		return nil, fmt.Errorf("%w: name table cut short", ErrMalformed)
	}
	out := map[uint16]string{}
	for i := range count {
		rec := name[6+12*i:]
		platform, encoding, lang := binary.BigEndian.Uint16(rec), binary.BigEndian.Uint16(rec[2:]), binary.BigEndian.Uint16(rec[4:])
		id, length, off := binary.BigEndian.Uint16(rec[6:]), int(binary.BigEndian.Uint16(rec[8:])), int(binary.BigEndian.Uint16(rec[10:]))
		if platform != 3 || encoding != 1 || lang != 0x409 {
			continue
		}
		if storage+off+length > len(name) || length%2 != 0 {
			return nil, fmt.Errorf("%w: name %d runs past the table", ErrMalformed, id)
		}
		s := name[storage+off : storage+off+length]
		u := make([]uint16, length/2)
		for j := range u {
			u[j] = binary.BigEndian.Uint16(s[2*j:])
		}
		out[id] = string(utf16.Decode(u))
	}
	return out, nil
}

// writeFont lays out the tables in tag order, each at a 4-byte boundary,
// with their checksums and head's checkSumAdjustment.
func writeFont(version uint32, tables map[string][]byte) []byte {
	tags := make([]string, 0, len(tables))
	for tag := range tables {
		tags = append(tags, tag)
	}
	slices.Sort(tags)
	n := len(tags)
	entrySelector := 0
	for 1<<(entrySelector+1) <= n {
		entrySelector++
	}
	searchRange := 16 << entrySelector
	out := binary.BigEndian.AppendUint32(nil, version)
	for _, v := range []int{n, searchRange, entrySelector, 16*n - searchRange} {
		out = binary.BigEndian.AppendUint16(out, uint16(v))
	}
	dir := len(out)
	out = append(out, make([]byte, 16*n)...)
	headAt := 0
	for i, tag := range tags {
		data := tables[tag]
		if tag == "head" {
			binary.BigEndian.PutUint32(data[8:], 0)
			headAt = len(out)
		}
		rec := out[dir+16*i:]
		copy(rec, tag)
		binary.BigEndian.PutUint32(rec[4:], checksum(data))
		binary.BigEndian.PutUint32(rec[8:], uint32(len(out)))
		binary.BigEndian.PutUint32(rec[12:], uint32(len(data)))
		out = append(out, data...)
		for len(out)%4 != 0 {
			out = append(out, 0)
		}
	}
	binary.BigEndian.PutUint32(out[headAt+8:], 0xB1B0AFBA-checksum(out))
	return out
}

// checksum is the OpenType table checksum: the sum of big-endian uint32s,
// the last one padded with zeros.
func checksum(data []byte) uint32 {
	var sum uint32
	for i := 0; i < len(data); i += 4 {
		var w [4]byte
		copy(w[:], data[i:])
		sum += binary.BigEndian.Uint32(w[:])
	}
	return sum
}
