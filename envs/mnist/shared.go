package mnist

import (
	"sync"
	"weak"
)

// shared holds the instances decoded in this process, by the content ID
// of the store entry they were decoded from, so that the tasks of one run
// that read the same generate output (every MNIST tune, train and evaluate
// task) share one decoded, read-only copy and read the 55 MB entry once,
// instead of each holding its own bytes and its own copy. The pointers are
// weak: an instance no task holds any more is collected as usual, and the
// next task reads and decodes again.
var shared struct {
	mu sync.Mutex
	m  map[string]weak.Pointer[Instance]
}

// Shared implements algos.SharedLoader: the process's instance of the
// entry with content ID id, read (read) and decoded (UnmarshalBinary, with
// all its checks) when no task holds one. Its users must not modify it:
// every method of Instance but UnmarshalBinary only reads it. Concurrent
// first loads of one ID may both decode; one copy is kept.
func (Env) Shared(id string, read func() ([]byte, error)) (*Instance, error) {
	shared.mu.Lock()
	in := shared.m[id].Value()
	shared.mu.Unlock()
	if in != nil {
		return in, nil
	}
	data, err := read()
	if err != nil {
		return nil, err
	}
	in = new(Instance)
	if err := in.UnmarshalBinary(data); err != nil {
		return nil, err
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.m == nil {
		shared.m = map[string]weak.Pointer[Instance]{}
	}
	if old := shared.m[id].Value(); old != nil {
		return old, nil
	}
	shared.m[id] = weak.Make(in)
	return in, nil
}
