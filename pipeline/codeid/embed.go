package codeid

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
)

// The directory always holds the committed README.md and .gitignore, so the
// pattern matches even when manifest.json was never generated.
//
//go:embed all:manifest
var manifestFS embed.FS

// embeddedName is the manifest's name inside manifestFS.
const embeddedName = "manifest/manifest.json"

// Stamp must be set at link time to StampOf(manifest.json bytes):
//
//	-ldflags "-X zorepro/pipeline/codeid.Stamp=xxh64-…"
//
// Embedded refuses a manifest whose digest differs, which catches a binary
// compiled with a manifest left over from another build.
var Stamp string

// stampVar is the fully qualified name of Stamp for -ldflags -X.
var stampVar = reflect.TypeFor[Manifest]().PkgPath() + ".Stamp"

// build describes the running binary, for comparison with the manifest.
type build struct {
	goVersion, goos, goarch string
	settings                map[string]string // debug.BuildInfo settings
}

func currentBuild() build {
	b := build{goVersion: runtime.Version(), goos: runtime.GOOS, goarch: runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		b.settings = make(map[string]string, len(bi.Settings))
		for _, s := range bi.Settings {
			b.settings[s.Key] = s.Value
		}
	}
	return b
}

var embedded = sync.OnceValues(func() (*Manifest, error) {
	data, err := manifestFS.ReadFile(embeddedName)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w (pipeline/codeid/%s was absent at compile time)", ErrNoManifest, embeddedName)
	}
	if err != nil { // embed.FS cannot fail otherwise; keep the error honest
		return nil, fmt.Errorf("codeid: read embedded manifest: %w", err)
	}
	return check(data, Stamp, currentBuild())
})

// Embedded returns the manifest embedded in this binary, after checking that
// it belongs to this build: it returns an error wrapping ErrNoManifest if
// the binary was compiled without one, and an error wrapping
// ErrStaleManifest if Stamp is missing or does not match the embedded bytes,
// or if the manifest's Go version, GOOS, GOARCH, build tags or recorded
// build environment differ from the binary's own build information. The
// result is computed once; the Manifest is shared and immutable.
func Embedded() (*Manifest, error) { return embedded() }

// check validates embedded manifest bytes against the link-time stamp and
// the running binary's build.
func check(data []byte, stamp string, b build) (*Manifest, error) {
	if stamp == "" {
		return nil, fmt.Errorf("%w: %s was not set at link time (-ldflags \"-X %s=$(go run ./pipeline/codeid/gen -stamp-of pipeline/codeid/%s)\")",
			ErrStaleManifest, stampVar, stampVar, embeddedName)
	}
	if got := StampOf(data); stamp != got {
		return nil, fmt.Errorf("%w: linked stamp %s, embedded manifest %s", ErrStaleManifest, stamp, got)
	}
	m, err := Parse(data)
	if err != nil {
		return nil, err
	}
	var problems []error
	mismatch := func(what, manifest, binary string) {
		if manifest != binary {
			problems = append(problems, fmt.Errorf("%s: manifest %q, binary %q", what, manifest, binary))
		}
	}
	if b.goVersion != m.raw.GoVersion && !strings.HasPrefix(b.goVersion, m.raw.GoVersion+" ") {
		mismatch("Go version", m.raw.GoVersion, b.goVersion)
	}
	mismatch("GOOS", m.raw.GOOS, b.goos)
	mismatch("GOARCH", m.raw.GOARCH, b.goarch)
	if b.settings != nil {
		mismatch("build tags", strings.Join(m.raw.Tags, ","), strings.Join(NormalizeTags([]string{b.settings["-tags"]}), ","))
		for _, k := range slices.Sorted(maps.Keys(m.raw.Env)) {
			if bv, ok := b.settings[k]; ok {
				mismatch(k, m.raw.Env[k], bv)
			}
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrStaleManifest, errors.Join(problems...))
	}
	return m, nil
}
