package codeid

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Packages of the throwaway module written by writeModule.
const (
	pkgA    = "example.com/m/a"
	pkgB    = "example.com/m/b"
	pkgC    = "example.com/m/c"
	pkgMain = "example.com/m/cmd/m"
)

// tinyModule maps file names to contents: a; b imports a; c is independent
// and has a file behind the "extra" tag; the command imports b and c. Package
// a embeds data.txt and has a test file.
var tinyModule = map[string]string{
	"go.mod": "module example.com/m\n\ngo 1.26\n",
	"a/a.go": `package a

import _ "embed"

//go:embed data.txt
var data string

// A returns the embedded text.
func A() string { return data }
`,
	"a/data.txt":  "hello\n",
	"a/a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n",
	"b/b.go":      "package b\n\nimport \"example.com/m/a\"\n\n// B wraps a.A.\nfunc B() string { return a.A() }\n",
	"c/c.go":      "package c\n\n// C returns one.\nfunc C() int { return 1 }\n",
	"c/extra.go":  "//go:build extra\n\npackage c\n\n// Extra returns two.\nfunc Extra() int { return 2 }\n",
	"cmd/m/main.go": `package main

import (
	"fmt"

	"example.com/m/b"
	"example.com/m/c"
)

func main() { fmt.Println(b.B(), c.C()) }
`,
}

// offlineGo makes child go commands work without network or workspace.
func offlineGo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not found:", err)
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOWORK", "off")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOTOOLCHAIN", "local")
}

// writeFiles writes files (slash-separated names) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// writeModule writes tinyModule into a new temporary directory.
func writeModule(t *testing.T) string {
	t.Helper()
	offlineGo(t)
	dir := t.TempDir()
	writeFiles(t, dir, tinyModule)
	return dir
}

// appendFile appends text to a file of the module.
func appendFile(t *testing.T, dir, name, text string) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(name))
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// generate runs Generate for the module's command and parses the result.
func generate(t *testing.T, dir string, tags ...string) ([]byte, *Manifest) {
	t.Helper()
	data, err := Generate(dir, tags, []string{"./cmd/m"})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	m, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse of generated manifest: %v\n%s", err, data)
	}
	return data, m
}

func closure(t *testing.T, m *Manifest, roots ...string) Identity {
	t.Helper()
	id, err := m.Closure(roots...)
	if err != nil {
		t.Fatalf("Closure(%v): %v", roots, err)
	}
	return id
}

func pkgHash(t *testing.T, m *Manifest, path string) string {
	t.Helper()
	p, ok := m.Package(path)
	if !ok {
		t.Fatalf("package %s not in manifest %v", path, m.Packages())
	}
	return p.Hash
}

func fileNames(t *testing.T, m *Manifest, path string) []string {
	t.Helper()
	p, ok := m.Package(path)
	if !ok {
		t.Fatalf("package %s not in manifest", path)
	}
	var names []string
	for _, f := range p.Files {
		names = append(names, f.Name)
	}
	return names
}

// hasPkgLine reports whether the identity lists package path.
func hasPkgLine(id Identity, path string) bool {
	return slices.ContainsFunc(id.Lines, func(l string) bool { return strings.HasPrefix(l, "pkg "+path+" ") })
}
