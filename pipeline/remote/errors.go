package remote

import "errors"

var (
	// ErrNotFound is returned by a Backend's Get, Head and Load when no
	// object has the key.
	ErrNotFound = errors.New("remote: no such object")

	// ErrExists is returned by a Backend's Create when an object already
	// has the key (whatever its bytes).
	ErrExists = errors.New("remote: object exists")

	// ErrConflict is returned by a Backend's Swap when the object is not
	// at the version the caller read (another writer changed it).
	ErrConflict = errors.New("remote: changed by another writer")

	// ErrReadOnly is returned by the writes of a backend that only reads
	// (a static web host).
	ErrReadOnly = errors.New("remote: read-only (a static web host takes no writes; push to s3:// or file://)")

	// ErrDamaged is returned by Pull when an object's bytes do not hash to
	// its name, or a record or action entry does not match what refers to
	// it: the object is named, and nothing enters the store.
	ErrDamaged = errors.New("remote: damaged object")

	// ErrDiverged is returned by Push and Pull when the remote and the
	// store record other outputs for the same action: two machines
	// computed different bytes.
	ErrDiverged = errors.New("remote: another output for the same action")

	// ErrUntrusted is returned by Pull with trusted keys when the index is
	// unsigned, or signed by no trusted key, or its signature does not
	// verify.
	ErrUntrusted = errors.New("remote: index not signed by a trusted key")

	// ErrNotRecorded is returned by Push for a task the store does not
	// record at the action this binary and plan give it.
	ErrNotRecorded = errors.New("remote: task not recorded")

	// ErrBadRemote is returned by Open for a remote address it cannot use.
	ErrBadRemote = errors.New("remote: bad address")
)
