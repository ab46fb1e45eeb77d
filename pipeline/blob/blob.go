package blob

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Encoder builds a deterministic little-endian binary blob: a 4-byte magic,
// a uint32 version, then the values appended in call order. Floats are
// stored as their IEEE-754 bits, so NaN payloads and signed zeros survive.
// Methods use it for MarshalState.
type Encoder struct{ buf []byte }

// NewEncoder starts a blob with the given 4-byte magic and version.
func NewEncoder(magic string, version uint32) *Encoder {
	if len(magic) != 4 {
		panic(fmt.Sprintf("blob: magic %q is not 4 bytes", magic))
	}
	e := &Encoder{buf: make([]byte, 0, 64)}
	e.buf = append(e.buf, magic...)
	e.Uint32(version)
	return e
}

// Uint32 appends v.
func (e *Encoder) Uint32(v uint32) { e.buf = binary.LittleEndian.AppendUint32(e.buf, v) }

// Uint64 appends v.
func (e *Encoder) Uint64(v uint64) { e.buf = binary.LittleEndian.AppendUint64(e.buf, v) }

// Int64 appends v (two's complement).
func (e *Encoder) Int64(v int64) { e.Uint64(uint64(v)) }

// Float64 appends the bits of v.
func (e *Encoder) Float64(v float64) { e.Uint64(math.Float64bits(v)) }

// Bool appends one byte, 0 or 1.
func (e *Encoder) Bool(v bool) {
	var b byte
	if v {
		b = 1
	}
	e.buf = append(e.buf, b)
}

// Floats appends len(v) as a uint64, then the values.
func (e *Encoder) Floats(v []float64) {
	e.Uint64(uint64(len(v)))
	for _, x := range v {
		e.Float64(x)
	}
}

// Blob appends len(b) as a uint64, then b.
func (e *Encoder) Blob(b []byte) {
	e.Uint64(uint64(len(b)))
	e.buf = append(e.buf, b...)
}

// String appends len(s) as a uint64, then the bytes of s.
func (e *Encoder) String(s string) {
	e.Uint64(uint64(len(s)))
	e.buf = append(e.buf, s...)
}

// Data returns the blob built so far.
func (e *Encoder) Data() []byte { return e.buf }

// Decoder reads a blob made by an Encoder. Errors are sticky: after the first
// failure every read returns a zero value and Err reports the failure, so a
// decode function can read all fields and check once. It never panics and
// never allocates more than the input can hold.
type Decoder struct {
	buf []byte
	off int
	err error
}

// NewDecoder checks the magic (ErrFormat) and the version (ErrVersion) and
// positions the decoder after them.
func NewDecoder(data []byte, magic string, version uint32) *Decoder {
	d := &Decoder{buf: data}
	switch {
	case len(data) < 8 || string(data[:4]) != magic:
		d.err = fmt.Errorf("%w: not a %q blob", ErrFormat, magic)
	case binary.LittleEndian.Uint32(data[4:8]) != version:
		d.err = fmt.Errorf("%w: %q version %d, this build reads %d", ErrVersion, magic, binary.LittleEndian.Uint32(data[4:8]), version)
	default:
		d.off = 8
	}
	return d
}

// Err returns the first error met, if any.
func (d *Decoder) Err() error { return d.err }

// Failf records a format error (if none is recorded yet); decode functions
// use it for invariant violations.
func (d *Decoder) Failf(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
	}
}

// Finish returns Err, or an ErrFormat error if bytes remain unread.
func (d *Decoder) Finish() error {
	if d.err == nil && d.off != len(d.buf) {
		d.Failf("%d trailing bytes", len(d.buf)-d.off)
	}
	return d.err
}

func (d *Decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || len(d.buf)-d.off < n {
		d.Failf("truncated at byte %d (need %d more)", d.off, n)
		return nil
	}
	b := d.buf[d.off : d.off+n]
	d.off += n
	return b
}

// Uint32 reads a uint32.
func (d *Decoder) Uint32() uint32 {
	if b := d.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

// Uint64 reads a uint64.
func (d *Decoder) Uint64() uint64 {
	if b := d.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// Int64 reads an int64.
func (d *Decoder) Int64() int64 { return int64(d.Uint64()) }

// Float64 reads a float64.
func (d *Decoder) Float64() float64 { return math.Float64frombits(d.Uint64()) }

// Bool reads a byte that must be 0 or 1.
func (d *Decoder) Bool() bool {
	b := d.take(1)
	if b == nil {
		return false
	}
	if b[0] > 1 {
		d.Failf("bool byte %d", b[0])
	}
	return b[0] == 1
}

// Count reads a uint64 element count and checks that count elements of at
// least minSize bytes each fit in the remaining input.
func (d *Decoder) Count(minSize int) int {
	n := d.Uint64()
	if d.err != nil {
		return 0
	}
	rem := uint64(len(d.buf) - d.off)
	if minSize < 1 {
		minSize = 1
	}
	if n > rem/uint64(minSize) {
		d.Failf("count %d exceeds the %d bytes left", n, rem)
		return 0
	}
	return int(n)
}

// Floats reads a length-prefixed float slice (never nil on success).
func (d *Decoder) Floats() []float64 {
	n := d.Count(8)
	if d.err != nil {
		return nil
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = d.Float64()
	}
	return v
}

// Blob reads a length-prefixed byte slice (a copy).
func (d *Decoder) Blob() []byte {
	n := d.Count(1)
	b := d.take(n)
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// String reads a length-prefixed string.
func (d *Decoder) String() string {
	n := d.Count(1)
	return string(d.take(n))
}

// Unmarshal decodes data into a new T with T's UnmarshalBinary: the Load
// of every environment, whose instances decode themselves.
func Unmarshal[T any, PT interface {
	*T
	UnmarshalBinary(data []byte) error
}](data []byte) (PT, error) {
	v := PT(new(T))
	if err := v.UnmarshalBinary(data); err != nil {
		return nil, err
	}
	return v, nil
}
