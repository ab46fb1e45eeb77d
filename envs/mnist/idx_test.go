package mnist

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// idxFile builds an idx file: magic, big-endian dimensions, payload.
func idxFile(magic uint32, dims []uint32, payload []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, magic)
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, d)
	}
	return append(b, payload...)
}

func seq(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
}

func TestParseImages(t *testing.T) {
	data := idxFile(ImagesMagic, []uint32{3, 2, 5}, seq(30))
	im, err := ParseImages(data)
	if err != nil {
		t.Fatal(err)
	}
	if im.N != 3 || im.Rows != 2 || im.Cols != 5 || !bytes.Equal(im.Pixels, seq(30)) {
		t.Errorf("got %+v", im)
	}
	if !bytes.Equal(append(idxHeader([]int{3, 2, 5}), im.Pixels...), data) {
		t.Error("idxHeader does not invert the parser")
	}
	// Zero images is a well-formed file.
	if im, err := ParseImages(idxFile(ImagesMagic, []uint32{0, 28, 28}, nil)); err != nil || im.N != 0 {
		t.Errorf("empty file: %+v, %v", im, err)
	}
}

func TestParseLabels(t *testing.T) {
	l, err := ParseLabels(idxFile(LabelsMagic, []uint32{4}, []byte{7, 2, 1, 0}))
	if err != nil || !bytes.Equal(l, []byte{7, 2, 1, 0}) {
		t.Errorf("got %v, %v", l, err)
	}
}

// Malformed headers and sizes each give their sentinel and a message that
// says what is wrong.
func TestParseIDXErrors(t *testing.T) {
	gz := []byte{0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0}
	for _, tc := range []struct {
		name   string
		data   []byte
		images bool
		want   error
		text   string
	}{
		{"empty", nil, true, ErrTruncated, "shorter than the 4-byte magic"},
		{"three bytes", []byte{0, 0, 8}, false, ErrTruncated, "4-byte magic"},
		{"gzip", gz, true, ErrMagic, "gzip"},
		{"labels as images", idxFile(LabelsMagic, []uint32{1}, []byte{1}), true, ErrMagic, "label file"},
		{"images as labels", idxFile(ImagesMagic, []uint32{1, 1, 1}, []byte{1}), false, ErrMagic, "image file"},
		{"float type", idxFile(0x00000d03, []uint32{1, 1, 1}, seq(8)), true, ErrMagic, "0x00000d03"},
		{"wrong rank", idxFile(0x00000802, []uint32{1, 1}, seq(1)), false, ErrMagic, "0x00000802"},
		{"header cut", idxFile(ImagesMagic, []uint32{1, 28}, nil), true, ErrTruncated, "16-byte header"},
		{"label header cut", []byte{0, 0, 8, 1, 0, 0}, false, ErrTruncated, "8-byte header"},
		{"payload cut", idxFile(ImagesMagic, []uint32{2, 28, 28}, seq(28*28*2-1)), true, ErrTruncated, "[2 28 28]"},
		{"label payload cut", idxFile(LabelsMagic, []uint32{5}, seq(4)), false, ErrTruncated, "[5]"},
		{"trailing", idxFile(ImagesMagic, []uint32{1, 2, 2}, seq(5)), true, ErrTrailing, "4 bytes"},
		{"label trailing", idxFile(LabelsMagic, []uint32{1}, seq(2)), false, ErrTrailing, "1 bytes"},
		{"huge dims", idxFile(ImagesMagic, []uint32{1 << 31, 1 << 31, 1 << 31}, seq(10)), true, ErrTruncated, "need more than"},
		{"max dims", idxFile(ImagesMagic, []uint32{^uint32(0), ^uint32(0), 0}, nil), true, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.images {
				_, err = ParseImages(tc.data)
			} else {
				_, err = ParseLabels(tc.data)
			}
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if err != nil && !strings.Contains(err.Error(), tc.text) {
				t.Errorf("error %q does not mention %q", err, tc.text)
			}
		})
	}
}

// The parsers never panic, and whatever they accept re-encodes to the same
// bytes with the announced sizes.
func FuzzParseIDX(f *testing.F) {
	f.Add(idxFile(ImagesMagic, []uint32{2, 2, 3}, seq(12)))
	f.Add(idxFile(LabelsMagic, []uint32{3}, seq(3)))
	f.Add(idxFile(ImagesMagic, []uint32{1 << 31, 2, 0}, nil))
	f.Add([]byte{0x1f, 0x8b, 8, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if im, err := ParseImages(data); err == nil {
			// Accepted sizes fit in the input, so the product cannot overflow
			// unless a factor is 0.
			if want := im.N * im.Rows * im.Cols; len(im.Pixels) != want && im.N != 0 && im.Rows != 0 && im.Cols != 0 || (im.N == 0 || im.Rows == 0 || im.Cols == 0) && len(im.Pixels) != 0 {
				t.Fatalf("%d pixels for %d×%d×%d", len(im.Pixels), im.N, im.Rows, im.Cols)
			}
			if !bytes.Equal(append(idxHeader([]int{im.N, im.Rows, im.Cols}), im.Pixels...), data) {
				t.Fatal("accepted images do not re-encode to the input")
			}
		}
		if l, err := ParseLabels(data); err == nil {
			if !bytes.Equal(append(idxHeader([]int{len(l)}), l...), data) {
				t.Fatal("accepted labels do not re-encode to the input")
			}
		}
	})
}
