// Package codeid gives tasks a precise code identity: the content of the Go
// packages a task is actually compiled from, as built into the running
// binary.
//
// At build time the generator (./pipeline/codeid/gen, logic in Generate)
// runs `go list -deps -json -tags T ./cmd/pipeline` and writes
// manifest/manifest.json. For every package of the main module it records
// the import path, the hash of every file compiled into it with those tags
// (Go, cgo, C, C++, Objective-C, headers, Fortran, assembly, SWIG, syso)
// and of every file it embeds, the package hash over those file hashes, its
// direct imports and its full dependency list. For every external package it
// records its module, and for every external module its version and go.sum
// "h1:" hash. It also records the build tags, GOVERSION, GOOS, GOARCH,
// CGO_ENABLED, GOEXPERIMENT, the GOARCH level variable (GOAMD64, ...) and
// the go directive of go.mod. Test files and files excluded by build
// constraints never count. The package embeds that directory, and Embedded
// returns the decoded manifest.
//
// Manifest.Closure(roots...) is the code identity of a task compiled from
// the given root packages: one "pkg <importpath> <hash>" line for each root
// and each of its main-module dependencies, and one
// "mod <path>@<version> <h1:hash>" line for each external module among its
// dependencies, sorted; ID is xxh64 over those lines. Editing
// algos/ars/ars.go therefore changes the ID exactly of the closures that
// contain zorepro/algos/ars. Standard-library code is not listed: a task
// identity must add Manifest.BuildLines (Go version, GOOS, GOARCH, tags,
// language version, GOAMD64, ...) next to the closure lines.
//
// # Building
//
// The manifest and the binary must come from the same tags and toolchain,
// and the binary must be linked with the stamp of the manifest it embeds
// (with TAGS possibly empty):
//
//	go run ./pipeline/codeid/gen -tags "$TAGS" -o pipeline/codeid/manifest/manifest.json
//	go build -tags "$TAGS" -ldflags "-X zorepro/pipeline/codeid.Stamp=$(go run ./pipeline/codeid/gen -stamp-of pipeline/codeid/manifest/manifest.json)" -o bin/pipeline ./cmd/pipeline
//
// or, generating and capturing the stamp in one step:
//
//	STAMP=$(go run ./pipeline/codeid/gen -tags "$TAGS" -o pipeline/codeid/manifest/manifest.json -stamp)
//	go build -tags "$TAGS" -ldflags "-X zorepro/pipeline/codeid.Stamp=$STAMP" -o bin/pipeline ./cmd/pipeline
//
// In a Makefile recipe write $$(...) for $(...).
//
// # Invariants
//
//   - The manifest is deterministic: the same tree, tags and toolchain give
//     byte-identical output (sorted lists and keys, fixed indentation, no
//     absolute paths, no times).
//   - manifest.json is gitignored and generated; manifest/README.md and
//     manifest/.gitignore are committed, so `//go:embed all:manifest`
//     always matches and a plain `go build` or `go test` compiles, with
//     Embedded reporting ErrNoManifest.
//   - The manifest being written is left out of package codeid's own hash
//     (it is one of its embedded files), so generation is a fixed point.
//   - Embedded trusts a manifest only if Stamp, set with -ldflags -X, equals
//     StampOf of the embedded bytes and the manifest's Go version, GOOS,
//     GOARCH, tags and environment agree with runtime and
//     runtime/debug.BuildInfo; otherwise it returns ErrStaleManifest.
//   - Parse rejects unknown fields, another Format, and any manifest whose
//     package hashes do not match their file lists.
//
// # Caveats
//
// Versions of C compilers and native libraries a cgo package links are not
// in the manifest; add them to the identity of the stages that use them.
// The generator always passes -tags (possibly empty) to go list, like the
// build command above, so a -tags in GOFLAGS is overridden in both; a binary
// built without -tags but with GOFLAGS=-tags=... is reported stale.
package codeid
