package mnist

import (
	"encoding/binary"
	"fmt"
)

// Magic numbers of the idx format (Yann LeCun's MNIST page): two zero bytes,
// the element type 0x08 (unsigned byte) and the number of dimensions, in
// big-endian order; the dimensions follow as big-endian uint32s.
const (
	ImagesMagic = 0x00000803 // unsigned bytes, 3 dimensions: count, rows, cols
	LabelsMagic = 0x00000801 // unsigned bytes, 1 dimension: count
)

// Images is a parsed idx image file: N images of Rows×Cols pixels, stored
// image by image, row-major, one byte (0–255) per pixel.
type Images struct {
	N, Rows, Cols int
	Pixels        []uint8
}

// ParseImages parses an idx3 image file (magic 0x00000803). Pixels aliases
// data. It returns ErrTruncated, ErrMagic or ErrTrailing errors, and never
// panics.
func ParseImages(data []byte) (Images, error) {
	dims, payload, err := parseIDX(data, ImagesMagic)
	if err != nil {
		return Images{}, err
	}
	return Images{N: dims[0], Rows: dims[1], Cols: dims[2], Pixels: payload}, nil
}

// ParseLabels parses an idx1 label file (magic 0x00000801); the result
// aliases data. It returns ErrTruncated, ErrMagic or ErrTrailing errors, and
// never panics.
func ParseLabels(data []byte) ([]uint8, error) {
	_, payload, err := parseIDX(data, LabelsMagic)
	return payload, err
}

// parseIDX checks the magic, reads the dimensions and returns them with the
// payload, which must hold exactly their product of bytes.
func parseIDX(data []byte, magic uint32) ([]int, []byte, error) {
	if len(data) < 4 {
		return nil, nil, fmt.Errorf("%w: %d bytes, shorter than the 4-byte magic number", ErrTruncated, len(data))
	}
	if got := binary.BigEndian.Uint32(data); got != magic {
		hint := ""
		switch {
		case data[0] == 0x1f && data[1] == 0x8b:
			hint = " (gzip data: decompress the file first)"
		case got == ImagesMagic:
			hint = " (an image file where labels were expected)"
		case got == LabelsMagic:
			hint = " (a label file where images were expected)"
		}
		return nil, nil, fmt.Errorf("%w: 0x%08x, want 0x%08x%s", ErrMagic, got, magic, hint)
	}
	nd := int(magic & 0xff)
	header := 4 + 4*nd
	if len(data) < header {
		return nil, nil, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", ErrTruncated, len(data), header)
	}
	dims := make([]int, nd)
	avail := uint64(len(data) - header)
	size := uint64(1)
	for i := range dims {
		d := uint64(binary.BigEndian.Uint32(data[4+4*i:]))
		dims[i] = int(d)
		// size·d ≤ avail < 2⁶³ is checked without overflowing: once size
		// exceeds avail the file is truncated whatever the rest says.
		if d != 0 && size > avail/d {
			size = avail + 1
		} else {
			size *= d
		}
	}
	switch {
	case size > avail:
		return nil, nil, fmt.Errorf("%w: dimensions %v need more than the %d bytes of data the file has", ErrTruncated, dims, avail)
	case size < avail:
		return nil, nil, fmt.Errorf("%w: dimensions %v need %d bytes of data, the file has %d", ErrTrailing, dims, size, avail)
	}
	return dims, data[header:], nil
}

// idxHeader returns the header of an idx file of unsigned bytes with the
// given dimensions (the inverse of parseIDX's header reading).
func idxHeader(dims []int) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0x00000800|uint32(len(dims)))
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
	}
	return b
}
