package mnist

import (
	"errors"
	"runtime"
	"sync"
	"testing"
)

// Shared reads and decodes an entry once per process while a task holds
// it: later loads of the same ID share the instance without reading;
// another ID gets its own; bad bytes are refused and not kept; concurrent
// loads agree on one copy.
func TestSharedDecodesOnce(t *testing.T) {
	enc := func(seed uint8) []byte {
		in := &Instance{TrainImages: make([]uint8, 30*Pixels), TrainLabels: make([]uint8, 30),
			TestImages: make([]uint8, 10*Pixels), TestLabels: make([]uint8, 10)}
		for i := range in.TrainImages {
			in.TrainImages[i] = uint8(i) * seed
		}
		for i := range in.TrainLabels {
			in.TrainLabels[i] = (uint8(i) + seed) % 10
		}
		in.Digests = in.idxDigests()
		b, err := in.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	reads := 0
	reader := func(b []byte) func() ([]byte, error) {
		return func() ([]byte, error) { reads++; return b, nil }
	}
	a, b := enc(1), enc(2)
	first, err := Env{}.Shared("xxh64-a", reader(a))
	if err != nil {
		t.Fatal(err)
	}
	again, err := Env{}.Shared("xxh64-a", reader(a))
	if err != nil || again != first || reads != 1 {
		t.Fatalf("the same entry: %p then %p, %d reads, %v", first, again, reads, err)
	}
	other, err := Env{}.Shared("xxh64-b", reader(b))
	if err != nil || other == first || reads != 2 || other.TrainLabels[0] == first.TrainLabels[0] {
		t.Fatalf("another entry: shared %v, %d reads, %v", other == first, reads, err)
	}
	bad := append([]byte(nil), a...)
	bad[len(bad)-1] = 200 // a test label out of range
	if _, err := (Env{}).Shared("xxh64-bad", reader(bad)); !errors.Is(err, ErrLabel) {
		t.Fatalf("corrupt bytes: %v", err)
	}
	if _, err := (Env{}).Shared("xxh64-bad", reader(a)); err != nil || reads != 4 {
		t.Fatalf("a refused entry was kept: %d reads, %v", reads, err)
	}
	failing := errors.New("disk error")
	if _, err := (Env{}).Shared("xxh64-c", func() ([]byte, error) { return nil, failing }); !errors.Is(err, failing) {
		t.Fatalf("read error: %v", err)
	}
	c := enc(3)
	var wg sync.WaitGroup
	got := make([]*Instance, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in, err := Env{}.Shared("xxh64-c", func() ([]byte, error) { return c, nil })
			if err != nil {
				t.Error(err)
			}
			got[i] = in
		}()
	}
	wg.Wait()
	for i := range got {
		if got[i] != got[0] {
			t.Fatalf("concurrent loads gave %d copies", i+1)
		}
	}
	runtime.KeepAlive(first)
	runtime.KeepAlive(other)
}
