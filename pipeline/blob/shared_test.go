package blob_test

import (
	"errors"
	"runtime"
	"testing"

	"zorepro/pipeline/blob"
)

type vec struct{ v []float64 }

func (x *vec) UnmarshalBinary(data []byte) error {
	d := blob.NewDecoder(data, "TVEC", 1)
	v := d.Floats()
	if err := d.Finish(); err != nil {
		return err
	}
	x.v = v
	return nil
}

func encode(v ...float64) []byte {
	e := blob.NewEncoder("TVEC", 1)
	e.Floats(v)
	return e.Data()
}

// Shared decodes an entry once while a task holds it, decodes again once
// none does, and never keeps a value that failed to decode.
func TestSharedDecodesOncePerID(t *testing.T) {
	var s blob.Shared[vec, *vec]
	reads := 0
	read := func(data []byte) func() ([]byte, error) {
		return func() ([]byte, error) { reads++; return data, nil }
	}
	a, err := s.Get("id-a", read(encode(1, 2)))
	if err != nil || len(a.v) != 2 {
		t.Fatalf("Get: %v %v", a, err)
	}
	b, _ := s.Get("id-a", read(encode(9)))
	if b != a || reads != 1 {
		t.Fatalf("second Get of one ID: same value %v, %d reads", b == a, reads)
	}
	if c, _ := s.Get("id-b", read(encode(3))); c == a || c.v[0] != 3 || reads != 2 {
		t.Fatalf("another ID shares the value, or was not read (%d reads)", reads)
	}
	if _, err := s.Get("id-c", read([]byte("garbage"))); !errors.Is(err, blob.ErrFormat) {
		t.Fatalf("a bad entry: %v, want ErrFormat", err)
	}
	if _, err := s.Get("id-c", read(encode(4))); err != nil || reads != 4 {
		t.Fatalf("after a failed decode the entry is read again: %v, %d reads", err, reads)
	}
	runtime.KeepAlive(a)
	a, b = nil, nil
	runtime.GC()
	runtime.GC()
	if v, _ := s.Get("id-a", read(encode(5))); v.v[0] != 5 || reads != 5 {
		t.Errorf("an entry no task holds is decoded again after collection: got %v, %d reads", v.v, reads)
	}
}
