package codeid

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// Format names the manifest layout; Parse rejects any other value. Bump it
// when the meaning of a field or of a hash changes.
const Format = "zorepro/codeid/v1"

// hashPrefix starts every digest in a manifest and every Identity.ID.
const hashPrefix = "xxh64-"

// File is one compiled (or embedded) file of a package.
type File struct {
	// Name is the file name relative to the package directory, with forward
	// slashes (embedded files may lie in sub-directories).
	Name string `json:"name"`
	// Hash is "xxh64-<16 hex>" of the file's bytes.
	Hash string `json:"hash"`
}

// Package is a package of the main module as recorded in a manifest.
type Package struct {
	// Path is the import path.
	Path string `json:"path"`
	// Hash is "xxh64-<16 hex>" of the lines "<name> <hash>\n" of Files, in
	// order (see PackageHash).
	Hash string `json:"hash"`
	// Files are the files compiled into the package with the manifest's
	// tags, plus its embedded files, sorted by name. Test files never count.
	Files []File `json:"files"`
	// Imports are the direct imports, sorted (may include "C").
	Imports []string `json:"imports"`
	// Deps is the full transitive dependency list reported by go list,
	// sorted; it includes standard-library packages.
	Deps []string `json:"deps"`
}

// Module is an external module that contributes packages to the build.
type Module struct {
	// Path and Version are the required module path and version.
	Path    string `json:"path"`
	Version string `json:"version"`
	// Replace is empty, or "path@version" of a module replacement, or the
	// directory of a directory replacement as written in go.mod.
	Replace string `json:"replace,omitempty"`
	// Sum is the go.sum "h1:" hash of the module (of the replacement if
	// any). For a directory replacement, which has no go.sum line, it is
	// "xxh64-<16 hex>" over the lines "pkg <path> <hash>\n" of the module's
	// packages in the build, hashed like main-module packages.
	Sum string `json:"sum"`
}

// ExternalPackage maps a package of an external module to its module path.
type ExternalPackage struct {
	Path   string `json:"path"`
	Module string `json:"module"`
}

// manifestJSON is the on-disk layout of manifest.json. Field order is the
// output order; every list is sorted by the generator.
type manifestJSON struct {
	Format    string            `json:"format"`
	GoVersion string            `json:"go_version"`
	GOOS      string            `json:"goos"`
	GOARCH    string            `json:"goarch"`
	Env       map[string]string `json:"env"`
	Tags      []string          `json:"tags"`
	Module    string            `json:"module"`
	Lang      string            `json:"lang"`
	Roots     []string          `json:"roots"`
	Packages  []Package         `json:"packages"`
	External  []ExternalPackage `json:"external"`
	Modules   []Module          `json:"modules"`
}

// Manifest is the decoded, validated form of manifest.json. It is
// immutable and safe for concurrent use; accessors return copies.
type Manifest struct {
	raw  manifestJSON
	pkgs map[string]*Package // main-module packages by import path
	ext  map[string]string   // external package -> module path
	mods map[string]*Module  // external modules by module path
}

// Identity is the code identity of a closure of packages.
type Identity struct {
	// ID is "xxh64-<16 hex>" of Lines, each followed by "\n".
	ID string
	// Lines, sorted, are "pkg <importpath> <hash>" for every main-module
	// package of the closure and "mod <path>@<version>[=><replace>] <sum>"
	// for every external module of the closure. Standard-library packages
	// are covered by the Go version and are not listed.
	Lines []string
}

// Digest returns "xxh64-<16 hex>" of data: the form of every hash in a
// manifest and of the link-time Stamp.
func Digest(data []byte) string { return formatSum(xxhash.Sum64(data)) }

// StampOf returns the value Stamp must be linked with for a binary that
// embeds the manifest bytes data. It equals Digest(data).
func StampOf(data []byte) string { return Digest(data) }

// PackageHash returns the content hash of a package from its files, in the
// given order: xxh64 over "<name> <hash>\n" for each file.
func PackageHash(files []File) string {
	d := xxhash.New()
	for _, f := range files {
		d.WriteString(f.Name)
		d.WriteString(" ")
		d.WriteString(f.Hash)
		d.WriteString("\n")
	}
	return formatSum(d.Sum64())
}

func formatSum(s uint64) string { return fmt.Sprintf("%s%016x", hashPrefix, s) }

func linesDigest(lines []string) string {
	d := xxhash.New()
	for _, l := range lines {
		d.WriteString(l)
		d.WriteString("\n")
	}
	return formatSum(d.Sum64())
}

func validDigest(s string) bool {
	h, ok := strings.CutPrefix(s, hashPrefix)
	if !ok || len(h) != 16 {
		return false
	}
	for _, c := range h {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Parse decodes and validates a manifest. Unknown fields, a different
// Format, duplicate entries, malformed hashes, a package hash that does not
// match its files, or references to unrecorded packages or modules make it
// fail with an error wrapping ErrBadManifest that lists every problem.
func Parse(data []byte) (*Manifest, error) {
	var raw manifestJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: invalid JSON: %v", ErrBadManifest, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: invalid JSON: trailing data after the manifest object", ErrBadManifest)
	}
	m, problems := index(raw)
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrBadManifest, errors.Join(problems...))
	}
	return m, nil
}

// index builds the lookup maps and checks the manifest's consistency.
func index(raw manifestJSON) (*Manifest, []error) {
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }

	if raw.Format != Format {
		bad("format %q, want %q", raw.Format, Format)
	}
	for _, f := range [][2]string{{"go_version", raw.GoVersion}, {"goos", raw.GOOS}, {"goarch", raw.GOARCH}, {"module", raw.Module}} {
		if f[1] == "" {
			bad("field %s is empty", f[0])
		}
	}
	m := &Manifest{
		raw:  raw,
		pkgs: make(map[string]*Package, len(raw.Packages)),
		ext:  make(map[string]string, len(raw.External)),
		mods: make(map[string]*Module, len(raw.Modules)),
	}
	for i := range raw.Packages {
		p := &raw.Packages[i]
		if p.Path == "" {
			bad("packages[%d]: empty path", i)
			continue
		}
		if _, dup := m.pkgs[p.Path]; dup {
			bad("package %s: listed twice", p.Path)
			continue
		}
		m.pkgs[p.Path] = p
		for j, f := range p.Files {
			if f.Name == "" || !validDigest(f.Hash) {
				bad("package %s: file %q: bad name or hash %q", p.Path, f.Name, f.Hash)
			}
			if j > 0 && p.Files[j-1].Name >= f.Name {
				bad("package %s: files not sorted or duplicated at %q", p.Path, f.Name)
			}
		}
		if want := PackageHash(p.Files); p.Hash != want {
			bad("package %s: hash %q does not match its files (%s)", p.Path, p.Hash, want)
		}
	}
	for i := range raw.Modules {
		mod := &raw.Modules[i]
		switch {
		case mod.Path == "":
			bad("modules[%d]: empty path", i)
		case mod.Sum == "":
			bad("module %s@%s: empty sum", mod.Path, mod.Version)
		case m.mods[mod.Path] != nil:
			bad("module %s: listed twice", mod.Path)
		default:
			m.mods[mod.Path] = mod
		}
	}
	for _, e := range raw.External {
		switch {
		case m.mods[e.Module] == nil:
			bad("external package %s: module %q not recorded", e.Path, e.Module)
		case m.pkgs[e.Path] != nil:
			bad("external package %s: also a main-module package", e.Path)
		case m.ext[e.Path] != "":
			bad("external package %s: listed twice", e.Path)
		default:
			m.ext[e.Path] = e.Module
		}
	}
	for _, p := range raw.Packages {
		for _, d := range p.Deps {
			if m.pkgs[d] == nil && inModule(raw.Module, d) {
				bad("package %s: dependency %s of the main module not recorded", p.Path, d)
			}
		}
	}
	for _, r := range raw.Roots {
		if m.pkgs[r] == nil {
			bad("root %s not recorded", r)
		}
	}
	return m, problems
}

func inModule(mod, path string) bool {
	return mod != "" && (path == mod || strings.HasPrefix(path, mod+"/"))
}

// Closure returns the code identity of the given root packages (import
// paths of main-module packages): the roots and their main-module
// dependencies as "pkg" lines, and the external modules of their
// dependencies as "mod" lines. Unknown roots yield an error wrapping
// ErrUnknownPackage that names all of them.
func (m *Manifest) Closure(roots ...string) (Identity, error) {
	if len(roots) == 0 {
		return Identity{}, fmt.Errorf("%w: Closure called without root packages", ErrUnknownPackage)
	}
	var unknown []string
	set := make(map[string]bool)
	for _, r := range roots {
		p := m.pkgs[r]
		if p == nil {
			unknown = append(unknown, r)
			continue
		}
		set["pkg "+p.Path+" "+p.Hash] = true
		for _, d := range p.Deps {
			if dp := m.pkgs[d]; dp != nil {
				set["pkg "+dp.Path+" "+dp.Hash] = true
			} else if mp, ok := m.ext[d]; ok {
				set[m.mods[mp].line()] = true
			}
		}
	}
	if len(unknown) > 0 {
		return Identity{}, fmt.Errorf("%w: %s (module %s)", ErrUnknownPackage, strings.Join(unknown, ", "), m.raw.Module)
	}
	lines := make([]string, 0, len(set))
	for l := range set {
		lines = append(lines, l)
	}
	sort.Strings(lines)
	return Identity{ID: linesDigest(lines), Lines: lines}, nil
}

func (mod *Module) line() string {
	v := mod.Path + "@" + mod.Version
	if mod.Replace != "" {
		v += "=>" + mod.Replace
	}
	return "mod " + v + " " + mod.Sum
}

// Packages returns the import paths of the main-module packages in the
// manifest, sorted.
func (m *Manifest) Packages() []string {
	out := make([]string, 0, len(m.pkgs))
	for p := range m.pkgs {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Package returns the record of a main-module package.
func (m *Manifest) Package(path string) (Package, bool) {
	p := m.pkgs[path]
	if p == nil {
		return Package{}, false
	}
	return Package{
		Path:    p.Path,
		Hash:    p.Hash,
		Files:   slices.Clone(p.Files),
		Imports: slices.Clone(p.Imports),
		Deps:    slices.Clone(p.Deps),
	}, true
}

// Roots returns the import paths of the packages the manifest was generated
// for (e.g. zorepro/cmd/pipeline), sorted.
func (m *Manifest) Roots() []string { return slices.Clone(m.raw.Roots) }

// Module returns the main module path.
func (m *Manifest) Module() string { return m.raw.Module }

// GoVersion returns the toolchain version (`go env GOVERSION`), e.g. "go1.26.8".
func (m *Manifest) GoVersion() string { return m.raw.GoVersion }

// GOARCH returns the target architecture.
func (m *Manifest) GOARCH() string { return m.raw.GOARCH }

// GOOS returns the target operating system.
func (m *Manifest) GOOS() string { return m.raw.GOOS }

// Tags returns the build tags, sorted and de-duplicated.
func (m *Manifest) Tags() []string { return slices.Clone(m.raw.Tags) }

// BuildLines returns sorted "key value" lines for everything besides source
// code that decides what the compiler produces and that a task identity
// should include: "go <GOVERSION>", "goos <GOOS>", "goarch <GOARCH>",
// "tags <t1,t2>", "lang <go directive of go.mod>" and "env <KEY>=<value>"
// for CGO_ENABLED, GOEXPERIMENT and the GOARCH-specific level variable
// (e.g. GOAMD64, which decides whether FMA instructions are used).
func (m *Manifest) BuildLines() []string {
	lines := []string{
		"go " + m.raw.GoVersion,
		"goos " + m.raw.GOOS,
		"goarch " + m.raw.GOARCH,
		"tags " + strings.Join(m.raw.Tags, ","),
		"lang " + m.raw.Lang,
	}
	for k, v := range m.raw.Env {
		lines = append(lines, "env "+k+"="+v)
	}
	sort.Strings(lines)
	return lines
}
