package remote

import (
	"context"
	"io"
	"time"
)

// Backend is where a remote's objects live. Keys are slash-separated
// paths below the remote's root ("objects/ab/ab12…", "index.json").
// Implementations: package s3 (any S3-compatible service), package file (a
// directory) and package web (a static web host, read-only).
type Backend interface {
	// Get opens the object at key (ErrNotFound if there is none).
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// Head returns the size of the object at key (ErrNotFound).
	Head(ctx context.Context, key string) (int64, error)
	// Create writes size bytes from r at key unless an object is there
	// already (ErrExists, whatever its bytes): a reader sees the whole
	// object or none. On a retry r is read again from its start.
	Create(ctx context.Context, key string, r io.ReadSeeker, size int64) error
	// Load reads a small object whole, with a version that Swap takes
	// (ErrNotFound if there is none).
	Load(ctx context.Context, key string) (data []byte, version string, err error)
	// Swap replaces the object at key with data if it is still at version
	// ("": there must be none), else returns ErrConflict.
	Swap(ctx context.Context, key string, data []byte, version string) error
	// List calls fn for every object whose key starts with prefix, in key
	// order, with its size and when it was last written.
	List(ctx context.Context, prefix string, fn func(key string, size int64, modified time.Time) error) error
	// Delete removes the object at key (no error if there is none).
	Delete(ctx context.Context, key string) error
	// String names the remote (its address) in messages.
	String() string
}
