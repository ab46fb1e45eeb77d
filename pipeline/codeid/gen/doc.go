// Command gen writes the code manifest that package zorepro/pipeline/codeid
// embeds, or prints the link-time stamp of one.
//
// Usage, from the module root:
//
//	go run ./pipeline/codeid/gen [-tags T] [-o FILE] [-stamp] [package ...]
//	go run ./pipeline/codeid/gen -stamp-of FILE
//
// The first form runs `go list -deps -json -tags T` on the packages
// (default ./cmd/pipeline, patterns relative to the module root) and writes
// the manifest atomically to FILE (default
// pipeline/codeid/manifest/manifest.json; "-" for standard output); an
// unchanged manifest is not rewritten. With -stamp it then prints the stamp
// to link into the binary. The second form only prints the stamp of an
// existing file. Standard output carries nothing but the stamp, so it can be
// captured with $(...). See package codeid for the build recipe.
//
// All logic lives in codeid.Generate; this command only parses flags.
package main
