package blob

import (
	"sync"
	"weak"
)

// Shared holds values decoded in this process, by the content ID of the
// store entry they were decoded from, so that the tasks of one run that
// read the same large input (an MNIST data set, a linear-regression
// instance at d = 1000) share one decoded, read-only copy and read the
// entry once. The pointers are weak: a value no task holds any more is
// collected as usual, and the next task reads and decodes again. The zero
// value is ready to use; use one per type, as a package-level variable.
type Shared[T any, PT interface {
	*T
	UnmarshalBinary(data []byte) error
}] struct {
	mu sync.Mutex
	m  map[string]weak.Pointer[T]
}

// Get returns the process's value of the entry with content ID id, read
// (read) and decoded (UnmarshalBinary, with all its checks) when no task
// holds one. Its users must not modify it. Concurrent first loads of one ID
// may both decode; one copy is kept.
func (s *Shared[T, PT]) Get(id string, read func() ([]byte, error)) (PT, error) {
	s.mu.Lock()
	v := s.m[id].Value()
	s.mu.Unlock()
	if v != nil {
		return v, nil
	}
	data, err := read()
	if err != nil {
		return nil, err
	}
	dec, err := Unmarshal[T, PT](data)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]weak.Pointer[T]{}
	}
	if old := s.m[id].Value(); old != nil {
		return old, nil
	}
	s.m[id] = weak.Make((*T)(dec))
	return dec, nil
}
