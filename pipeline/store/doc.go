// Package store is a content-addressed store: a pure map from ID (the
// xxhash64 of the bytes) to bytes, kept as plain files under one root.
//
// Layout under the root directory:
//
//	cas/<first 2 hex>/<16 hex>     one entry; its name is its ID, its bytes are the content
//	tmp/                           temp files being written; never read
//	quarantine/<16 hex>.<nanos>    entries found corrupt, moved aside for inspection
//
// Invariants:
//   - An entry is published atomically: written to a temp file in tmp/,
//     fsynced, renamed into cas/, and the shard directory fsynced. A reader
//     never observes a partly written entry under cas/ from this package.
//   - Nothing read from cas/ is trusted: Get re-hashes every entry. A
//     missing entry is ErrNotFound; an entry whose bytes do not hash to its
//     name (flipped bits, truncation, a foreign write) is a *CorruptError
//     (errors.Is ErrCorrupt). Callers treat both as a cache miss.
//   - A corrupt entry is never deleted silently: Get and Put move it to
//     quarantine/ so that the next Put recreates a good entry in its place.
//   - Put is idempotent and safe for concurrent use by goroutines and
//     processes sharing the root: racing writers of the same content each
//     publish a complete file and the last rename wins.
//
// Caveats:
//   - The ID does not encode the length, so a truncated entry is reported as
//     a hash mismatch; the Reason gives the size found.
//   - Temp files left by a crashed process stay in tmp/ until a gc removes
//     them; they are never mistaken for entries.
//   - Walk does not re-hash; it lists what is on disk for a future gc and
//     skips names that are not entries.
package store
