package remotetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"zorepro/pipeline/remote"
)

func get(t *testing.T, b remote.Backend, key string) []byte {
	t.Helper()
	r, err := b.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return data
}

// Conformance checks what package remote relies on of a writable
// backend: missing objects are ErrNotFound; Create writes once and never
// replaces (also when writers race); Swap replaces only the version read
// (concurrent read-modify-write loses no update); List lists a prefix in
// key order; Delete removes.
func Conformance(t *testing.T, b remote.Backend) {
	ctx := context.Background()
	if _, err := b.Get(ctx, "none/x"); !errors.Is(err, remote.ErrNotFound) {
		t.Errorf("get of a missing object: %v, want ErrNotFound", err)
	}
	if _, err := b.Head(ctx, "none/x"); !errors.Is(err, remote.ErrNotFound) {
		t.Errorf("head of a missing object: %v, want ErrNotFound", err)
	}
	if _, _, err := b.Load(ctx, "none/x"); !errors.Is(err, remote.ErrNotFound) {
		t.Errorf("load of a missing object: %v, want ErrNotFound", err)
	}
	data := bytes.Repeat([]byte("object "), 10000)
	if err := b.Create(ctx, "objects/a/1", bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatalf("create: %v", err)
	}
	if got := get(t, b, "objects/a/1"); !bytes.Equal(got, data) {
		t.Errorf("get after create: %d bytes, want %d", len(got), len(data))
	}
	if n, err := b.Head(ctx, "objects/a/1"); err != nil || n != int64(len(data)) {
		t.Errorf("head: %d, %v", n, err)
	}
	if err := b.Create(ctx, "objects/a/1", bytes.NewReader([]byte("other")), 5); !errors.Is(err, remote.ErrExists) {
		t.Errorf("a second create: %v, want ErrExists", err)
	}
	if got := get(t, b, "objects/a/1"); !bytes.Equal(got, data) {
		t.Errorf("a refused create changed the object")
	}

	// Racing creates: one wins, the others are told, the object is whole.
	var wg sync.WaitGroup
	wins := make([]bool, 8)
	errs := make([]error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := bytes.Repeat([]byte{byte('a' + i)}, 50000)
			errs[i] = b.Create(ctx, "objects/race", bytes.NewReader(body), int64(len(body)))
			wins[i] = errs[i] == nil
		}()
	}
	wg.Wait()
	won := -1
	for i := range 8 {
		switch {
		case wins[i] && won >= 0:
			t.Errorf("racing creates: writers %d and %d both succeeded", won, i)
		case wins[i]:
			won = i
		case !errors.Is(errs[i], remote.ErrExists):
			t.Errorf("racing create %d: %v, want ErrExists", i, errs[i])
		}
	}
	if won < 0 {
		t.Fatal("racing creates: none succeeded")
	}
	if got := get(t, b, "objects/race"); !bytes.Equal(got, bytes.Repeat([]byte{byte('a' + won)}, 50000)) {
		t.Errorf("racing creates: the object is not the winner's whole")
	}

	// Swap: create, refuse a stale version, replace the current one.
	if err := b.Swap(ctx, "index.json", []byte("0"), ""); err != nil {
		t.Fatalf("swap creating: %v", err)
	}
	if err := b.Swap(ctx, "index.json", []byte("x"), ""); !errors.Is(err, remote.ErrConflict) {
		t.Errorf("swap creating over an object: %v, want ErrConflict", err)
	}
	_, v, err := b.Load(ctx, "index.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Swap(ctx, "index.json", []byte("1"), v); err != nil {
		t.Fatalf("swap at the version read: %v", err)
	}
	if err := b.Swap(ctx, "index.json", []byte("2"), v); !errors.Is(err, remote.ErrConflict) {
		t.Errorf("swap at a stale version: %v, want ErrConflict", err)
	}
	// Concurrent read-modify-write with retries loses no increment.
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				for try := 0; ; try++ {
					cur, ver, err := b.Load(ctx, "index.json")
					if err != nil {
						t.Errorf("writer %d: %v", w, err)
						return
					}
					n, _ := strconv.Atoi(string(cur))
					err = b.Swap(ctx, "index.json", []byte(strconv.Itoa(n+1)), ver)
					if err == nil {
						break
					}
					if !errors.Is(err, remote.ErrConflict) || try > 200 {
						t.Errorf("writer %d: %v", w, err)
						return
					}
					time.Sleep(time.Duration(try%5) * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	if cur, _, _ := b.Load(ctx, "index.json"); string(cur) != "21" {
		t.Errorf("after 4 writers added 5 each to 1: %s, want 21", cur)
	}

	for _, k := range []string{"objects/b/2", "objects/a/3", "actions/x.json"} {
		if err := b.Create(ctx, k, bytes.NewReader([]byte(k)), int64(len(k))); err != nil {
			t.Fatal(err)
		}
	}
	var keys []string
	err = b.List(ctx, "objects/", func(key string, size int64, _ time.Time) error {
		keys = append(keys, fmt.Sprintf("%s:%d", key, size))
		return nil
	})
	if want := fmt.Sprintf("[objects/a/1:%d objects/a/3:11 objects/b/2:11 objects/race:50000]", len(data)); err != nil || fmt.Sprint(keys) != want {
		t.Errorf("list objects/: %v %v, want %s", keys, err, want)
	}
	if err := b.Delete(ctx, "objects/a/3"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Head(ctx, "objects/a/3"); !errors.Is(err, remote.ErrNotFound) {
		t.Errorf("head after delete: %v", err)
	}
	if err := b.Delete(ctx, "objects/a/3"); err != nil {
		t.Errorf("delete of a missing object: %v", err)
	}
}

// ReadOnly checks a backend that serves what Conformance wrote into
// another: reads find it, writes are ErrReadOnly.
func ReadOnly(t *testing.T, b remote.Backend) {
	ctx := context.Background()
	if got := get(t, b, "objects/b/2"); string(got) != "objects/b/2" {
		t.Errorf("get: %q", got)
	}
	if n, err := b.Head(ctx, "objects/b/2"); err != nil || n != 11 {
		t.Errorf("head: %d, %v", n, err)
	}
	if cur, _, err := b.Load(ctx, "index.json"); err != nil || string(cur) != "21" {
		t.Errorf("load: %q, %v", cur, err)
	}
	if _, err := b.Get(ctx, "objects/a/3"); !errors.Is(err, remote.ErrNotFound) {
		t.Errorf("get of a missing object: %v, want ErrNotFound", err)
	}
	for name, err := range map[string]error{
		"create": b.Create(ctx, "k", bytes.NewReader(nil), 0),
		"swap":   b.Swap(ctx, "index.json", nil, ""),
		"delete": b.Delete(ctx, "objects/b/2"),
	} {
		if !errors.Is(err, remote.ErrReadOnly) {
			t.Errorf("%s: %v, want ErrReadOnly", name, err)
		}
	}
}
