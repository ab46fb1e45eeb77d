package codeid

import (
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// validManifest is a small hand-written manifest; its package hashes are
// computed with PackageHash so only the tested field is ever wrong.
func validManifest() manifestJSON {
	filesA := []File{{Name: "a.go", Hash: Digest([]byte("package a"))}}
	filesB := []File{{Name: "b.go", Hash: Digest([]byte("package b"))}}
	return manifestJSON{
		Format: Format, GoVersion: "go1.26.8", GOOS: "linux", GOARCH: "amd64",
		Env:    map[string]string{"CGO_ENABLED": "1", "GOAMD64": "v1"},
		Tags:   []string{},
		Module: "zorepro", Lang: "1.26",
		Roots: []string{"zorepro/b"},
		Packages: []Package{
			{Path: "zorepro/a", Hash: PackageHash(filesA), Files: filesA, Imports: []string{"ext.org/x"}, Deps: []string{"ext.org/x", "fmt"}},
			{Path: "zorepro/b", Hash: PackageHash(filesB), Files: filesB, Imports: []string{"zorepro/a"}, Deps: []string{"ext.org/x", "fmt", "zorepro/a"}},
		},
		External: []ExternalPackage{{Path: "ext.org/x", Module: "ext.org/x"}},
		Modules:  []Module{{Path: "ext.org/x", Version: "v1.2.3", Sum: "h1:abc="}},
	}
}

func encode(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseAndClosureOfAHandWrittenManifest(t *testing.T) {
	m, err := Parse(encode(t, validManifest()))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	id := closure(t, m, "zorepro/b")
	want := []string{
		"mod ext.org/x@v1.2.3 h1:abc=",
		"pkg zorepro/a " + PackageHash([]File{{Name: "a.go", Hash: Digest([]byte("package a"))}}),
		"pkg zorepro/b " + PackageHash([]File{{Name: "b.go", Hash: Digest([]byte("package b"))}}),
	}
	if strings.Join(id.Lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Lines = %q, want %q", id.Lines, want)
	}
	if !strings.HasPrefix(id.ID, "xxh64-") || len(id.ID) != len("xxh64-")+16 {
		t.Errorf("ID %q is not xxh64-<16 hex>", id.ID)
	}
	if m.GoVersion() != "go1.26.8" || m.GOARCH() != "amd64" || m.GOOS() != "linux" || m.Module() != "zorepro" {
		t.Errorf("accessors: %s %s %s %s", m.GoVersion(), m.GOARCH(), m.GOOS(), m.Module())
	}
	wantBuild := "env CGO_ENABLED=1|env GOAMD64=v1|go go1.26.8|goarch amd64|goos linux|lang 1.26|tags "
	if got := strings.Join(m.BuildLines(), "|"); got != wantBuild {
		t.Errorf("BuildLines = %q, want %q", got, wantBuild)
	}

	// A replaced module shows its replacement.
	raw := validManifest()
	raw.Modules[0].Replace = "fork.org/x@v1.2.4"
	m2, err := Parse(encode(t, raw))
	if err != nil {
		t.Fatal(err)
	}
	if got := closure(t, m2, "zorepro/a").Lines[0]; got != "mod ext.org/x@v1.2.3=>fork.org/x@v1.2.4 h1:abc=" {
		t.Errorf("replaced module line = %q", got)
	}
	if closure(t, m2, "zorepro/a").ID == id.ID {
		t.Errorf("replacing a module did not change the identity")
	}
}

func TestAccessorsReturnCopies(t *testing.T) {
	m, err := Parse(encode(t, validManifest()))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := m.Package("zorepro/a")
	p.Files[0].Hash = "xxh64-0000000000000000"
	p.Deps[0] = "mutated"
	m.Roots()[0] = "mutated"
	if q, _ := m.Package("zorepro/a"); q.Files[0].Hash == p.Files[0].Hash || q.Deps[0] == "mutated" {
		t.Errorf("Package returned shared slices")
	}
	if m.Roots()[0] != "zorepro/b" {
		t.Errorf("Roots returned a shared slice")
	}
}

func TestClosureRejectsUnknownRoots(t *testing.T) {
	m, err := Parse(encode(t, validManifest()))
	if err != nil {
		t.Fatal(err)
	}
	for _, roots := range [][]string{
		{"zorepro/nope"},
		{"zorepro/a", "zorepro/nope", "zorepro/other"},
		{"ext.org/x"}, // external packages are not roots
		{"fmt"},
		nil,
	} {
		_, err := m.Closure(roots...)
		if !errors.Is(err, ErrUnknownPackage) {
			t.Errorf("Closure(%q): err = %v, want ErrUnknownPackage", roots, err)
			continue
		}
		for _, r := range roots {
			if r != "zorepro/a" && !strings.Contains(err.Error(), r) {
				t.Errorf("Closure(%q): error %q does not name %s", roots, err, r)
			}
		}
	}
}

func TestParseRejectsBadManifests(t *testing.T) {
	valid := encode(t, validManifest())
	mutate := func(f func(*manifestJSON)) []byte {
		raw := validManifest()
		f(&raw)
		return encode(t, raw)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string // in the error text
	}{
		{"empty", nil, "invalid JSON"},
		{"not JSON", []byte("manifest"), "invalid JSON"},
		{"truncated", valid[:len(valid)/2], "invalid JSON"},
		{"trailing data", append(append([]byte{}, valid...), []byte(" {}")...), "trailing data"},
		{"wrong type", []byte(`{"format": 1}`), "invalid JSON"},
		{"unknown field", []byte(`{"format":"zorepro/codeid/v1","extra":true}`), "extra"},
		{"other format", mutate(func(m *manifestJSON) { m.Format = "zorepro/codeid/v0" }), "format"},
		{"missing goarch", mutate(func(m *manifestJSON) { m.GOARCH = "" }), "goarch"},
		{"tampered file hash", mutate(func(m *manifestJSON) { m.Packages[0].Files[0].Hash = Digest([]byte("other")) }), "does not match its files"},
		{"malformed hash", mutate(func(m *manifestJSON) { m.Packages[0].Files[0].Hash = "md5-1" }), "bad name or hash"},
		{"duplicate package", mutate(func(m *manifestJSON) { m.Packages = append(m.Packages, m.Packages[0]) }), "listed twice"},
		{"unrecorded module", mutate(func(m *manifestJSON) { m.Modules = nil }), "not recorded"},
		{"unrecorded in-module dep", mutate(func(m *manifestJSON) { m.Packages = m.Packages[1:] }), "zorepro/a"},
		{"unknown root", mutate(func(m *manifestJSON) { m.Roots = []string{"zorepro/z"} }), "root zorepro/z"},
		{"empty sum", mutate(func(m *manifestJSON) { m.Modules[0].Sum = "" }), "empty sum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse(tc.data)
			if !errors.Is(err, ErrBadManifest) {
				t.Fatalf("Parse = %v, %v; want ErrBadManifest", m, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
	// All problems are reported at once.
	_, err := Parse(mutate(func(m *manifestJSON) { m.GOOS, m.GOARCH = "", "" }))
	if err == nil || !strings.Contains(err.Error(), "goos") || !strings.Contains(err.Error(), "goarch") {
		t.Errorf("Parse with two problems: %v, want both reported", err)
	}
}

func TestCheckEmbeddedManifest(t *testing.T) {
	raw := validManifest()
	raw.GoVersion, raw.GOOS, raw.GOARCH = runtime.Version(), runtime.GOOS, runtime.GOARCH
	raw.Tags = []string{"a", "b"}
	data := encode(t, raw)
	good := build{goVersion: runtime.Version(), goos: runtime.GOOS, goarch: runtime.GOARCH,
		settings: map[string]string{"-tags": "b,a", "CGO_ENABLED": "1", "GOAMD64": "v1", "-ldflags": "-X x"}}

	if m, err := check(data, StampOf(data), good); err != nil || m == nil {
		t.Fatalf("check of a matching build: %v", err)
	}
	noInfo := good
	noInfo.settings = nil
	if _, err := check(data, StampOf(data), noInfo); err != nil {
		t.Errorf("check without build info: %v", err)
	}
	experiment := good
	experiment.goVersion = runtime.Version() + " X:someexperiment"
	if _, err := check(data, StampOf(data), experiment); err != nil {
		t.Errorf("check with an experiment suffix on the Go version: %v", err)
	}

	for _, tc := range []struct {
		name  string
		stamp string
		b     func(*build)
		want  string
	}{
		{"no stamp", "", nil, "was not set at link time"},
		{"other stamp", StampOf([]byte("another manifest")), nil, "linked stamp"},
		{"other Go", "", func(b *build) { b.goVersion = "go1.1" }, "Go version"},
		{"other GOARCH", "", func(b *build) { b.goarch = "riscv64" }, "GOARCH"},
		{"other tags", "", func(b *build) { b.settings = map[string]string{"-tags": "a"} }, "build tags"},
		{"no tags", "", func(b *build) { b.settings = map[string]string{} }, "build tags"},
		{"other GOAMD64", "", func(b *build) { b.settings = map[string]string{"-tags": "a,b", "GOAMD64": "v3"} }, "GOAMD64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := good
			b.settings = map[string]string{"-tags": "a,b"}
			stamp := StampOf(data)
			if tc.b != nil {
				tc.b(&b)
			} else {
				stamp = tc.stamp
			}
			m, err := check(data, stamp, b)
			if !errors.Is(err, ErrStaleManifest) {
				t.Fatalf("check = %v, %v; want ErrStaleManifest", m, err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "make build") {
				t.Errorf("error %q does not mention %q and `make build`", err, tc.want)
			}
		})
	}

	bad := []byte("{not json")
	if _, err := check(bad, StampOf(bad), good); !errors.Is(err, ErrBadManifest) {
		t.Errorf("check of malformed bytes with a matching stamp: %v, want ErrBadManifest", err)
	}
}

func TestEmbeddedInATestBinaryIsRefused(t *testing.T) {
	// `go test` links no Stamp, so whether or not manifest.json was
	// generated in this checkout, the test binary must not trust it.
	m, err := Embedded()
	if m != nil || !(errors.Is(err, ErrNoManifest) || errors.Is(err, ErrStaleManifest)) {
		t.Fatalf("Embedded() = %v, %v; want ErrNoManifest or ErrStaleManifest", m, err)
	}
	if !strings.Contains(err.Error(), "make build") {
		t.Errorf("error %q does not say how to fix it", err)
	}
	m2, err2 := Embedded()
	if m2 != nil || err2 != err {
		t.Errorf("second Embedded() = %v, %v; want the same error", m2, err2)
	}
}
