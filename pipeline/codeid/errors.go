package codeid

import "errors"

var (
	// ErrNoManifest is returned by Embedded when the binary was compiled
	// without pipeline/codeid/manifest/manifest.json (e.g. a plain `go build`
	// or `go test`).
	ErrNoManifest = errors.New("codeid: binary built without a code manifest: build it with `make build`")

	// ErrStaleManifest is returned by Embedded when the embedded manifest does
	// not describe this binary: Stamp is empty or differs from the digest of
	// the embedded bytes, or the manifest's Go version, GOARCH, build tags or
	// build environment differ from the binary's own build information.
	ErrStaleManifest = errors.New("codeid: the embedded code manifest does not match this build; rebuild with `make build`")

	// ErrBadManifest is returned by Parse when the data is not a well-formed,
	// self-consistent manifest of the supported format.
	ErrBadManifest = errors.New("codeid: malformed code manifest")

	// ErrUnknownPackage is returned by Closure when a root is not a package
	// of the main module recorded in the manifest, or when no root is given.
	ErrUnknownPackage = errors.New("codeid: package not in the code manifest")

	// ErrGoList is returned by Generate when `go list` or `go env` fails or
	// reports a package error.
	ErrGoList = errors.New("codeid: go list failed")

	// ErrMissingSum is returned by Generate when an external module of the
	// build has no "h1:" line in the main module's go.sum.
	ErrMissingSum = errors.New("codeid: module missing from go.sum")
)
