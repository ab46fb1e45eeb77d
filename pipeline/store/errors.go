package store

import (
	"errors"
	"fmt"
)

var (
	// ErrNotFound is returned by Get and Remove when no entry exists for an
	// ID. Callers treat it as a cache miss.
	ErrNotFound = errors.New("store: entry not found")

	// ErrCorrupt is returned (inside a *CorruptError) by Get when an entry's
	// bytes do not hash to its ID. Callers treat it as a cache miss.
	ErrCorrupt = errors.New("store: corrupt entry")

	// ErrBadID is returned by ParseID when the text is not "xxh64-" followed
	// by 16 lowercase hex digits.
	ErrBadID = errors.New("store: malformed ID")

	// ErrReadOnly is returned by Put and Remove on a store opened with
	// Options.ReadOnly.
	ErrReadOnly = errors.New("store: opened read-only")
)

// CorruptError reports an entry whose content does not match its ID. It
// satisfies errors.Is(err, ErrCorrupt).
type CorruptError struct {
	ID     ID     // the ID that was asked for
	Path   string // where the corrupt entry was found
	Reason string // what was wrong, e.g. "hash mismatch: 5 bytes hash to xxh64-..."

	// Quarantine is where the entry was moved, or "" if moving it failed
	// (Reason then says why).
	Quarantine string
}

func (e *CorruptError) Error() string {
	msg := fmt.Sprintf("store: corrupt entry %s at %s: %s", e.ID, e.Path, e.Reason)
	if e.Quarantine != "" {
		msg += " (moved to " + e.Quarantine + ")"
	}
	return msg
}

// Unwrap makes errors.Is(err, ErrCorrupt) hold.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }
