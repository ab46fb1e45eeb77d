package codeid

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// e2eModule is the module path of the copy built by TestBuildRecipe.
const e2eModule = "example.com/e2e"

// copyCodeid copies this package (without tests), its generator, the
// committed manifest directory and the one package of the module it
// imports (pipeline/atomicfile) into dst/pipeline, rewriting their import
// paths to the e2e module.
func copyCodeid(t *testing.T, dst string) {
	t.Helper()
	self := reflect.TypeFor[Manifest]().PkgPath()
	module := strings.TrimSuffix(self, "/pipeline/codeid")
	files := map[string]string{}
	for _, sub := range []string{".", "gen", "manifest", "../atomicfile"} {
		entries, err := os.ReadDir(sub)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || strings.HasSuffix(name, "_test.go") || name == "manifest.json" ||
				!(strings.HasSuffix(name, ".go") || name == "README.md" || name == ".gitignore") {
				continue
			}
			data, err := os.ReadFile(filepath.Join(sub, name))
			if err != nil {
				t.Fatal(err)
			}
			files[filepath.ToSlash(filepath.Join("pipeline/codeid", sub, name))] =
				strings.ReplaceAll(string(data), module+"/pipeline/", e2eModule+"/pipeline/")
		}
	}
	writeFiles(t, dst, files)
}

// TestBuildRecipe runs the documented generate-and-build commands on a copy
// of this package inside a throwaway module and runs the binaries. It needs
// github.com/cespare/xxhash/v2 in the module cache (it never downloads).
// e2eMain is the e2e module's main package: it prints work's identity and
// the build tags from the embedded manifest.
const e2eMain = `package main

import (
	"fmt"
	"os"
	"strings"

	"example.com/e2e/pipeline/codeid"
	"example.com/e2e/plot"
	"example.com/e2e/work"
)

func main() {
	_, _ = work.Name, plot.Name
	m, err := codeid.Embedded()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	id, err := m.Closure("example.com/e2e/work")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(4)
	}
	fmt.Printf("%s tags=%s\n", id.ID, strings.Join(m.Tags(), ","))
}
`

// shell runs command lines in a module directory.
type shell struct {
	t   *testing.T
	dir string
}

// run runs a shell command line in the directory with TAGS set.
func (s shell) run(tags, line string) (string, error) {
	s.t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "TAGS="+tags)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String() + stderr.String(), err
	}
	return strings.TrimSpace(stdout.String()), nil
}

// must runs a line that must succeed.
func (s shell) must(tags, line string) string {
	s.t.Helper()
	out, err := s.run(tags, line)
	if err != nil {
		s.t.Fatalf("%s: %v\n%s", line, err, out)
	}
	return out
}

// refused runs a line that must fail with a message containing want.
func (s shell) refused(tags, line, want string) {
	s.t.Helper()
	out, err := s.run(tags, line)
	if err == nil || !strings.Contains(out, want) {
		s.t.Errorf("%s: err = %v, output %q; want a failure mentioning %q", line, err, out, want)
	}
}

func TestBuildRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds several binaries")
	}
	offlineGo(t)
	goSum := xxhashGoSum(t)
	dir := t.TempDir()
	copyCodeid(t, dir)
	writeFiles(t, dir, map[string]string{
		"go.mod":               "module " + e2eModule + "\n\ngo 1.26\n\nrequire github.com/cespare/xxhash/v2 v2.3.0\n",
		"go.sum":               goSum,
		"work/work.go":         "package work\n\n// Name names the work.\nconst Name = \"work\"\n",
		"work/fast.go":         "//go:build fast\n\npackage work\n\n// Fast is only built with -tags fast.\nconst Fast = true\n",
		"plot/plot.go":         "package plot\n\n// Name names the plot.\nconst Name = \"plot\"\n",
		"cmd/pipeline/main.go": e2eMain,
	})
	sh := shell{t: t, dir: dir}

	// The recipe of doc.go, for this module.
	const (
		generate = `go run ./pipeline/codeid/gen -tags "$TAGS" -o pipeline/codeid/manifest/manifest.json`
		build    = `go build -tags "$TAGS" -ldflags "-X ` + e2eModule + `/pipeline/codeid.Stamp=$(go run ./pipeline/codeid/gen -stamp-of pipeline/codeid/manifest/manifest.json)" -o bin/pipeline ./cmd/pipeline`
		recipe   = generate + " && " + build + " && ./bin/pipeline"
	)
	sh.refused("", "go build -o bin/plain ./cmd/pipeline && ./bin/plain", "built without a code manifest")

	first := sh.must("", recipe)
	if !strings.HasPrefix(first, "xxh64-") || !strings.HasSuffix(first, " tags=") {
		t.Fatalf("binary printed %q, want \"xxh64-… tags=\"", first)
	}
	manifestPath := filepath.Join(dir, "pipeline", "codeid", "manifest", "manifest.json")
	before, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	// Generating again with the manifest in place is a fixed point.
	sh.must("", generate)
	if after, err := os.ReadFile(manifestPath); err != nil || !bytes.Equal(before, after) {
		t.Errorf("regenerating changed the manifest (err %v)", err)
	}

	sh.refused("", "go build -o bin/nostamp ./cmd/pipeline && ./bin/nostamp", "does not match this build")
	// A manifest generated without tags, linked into a -tags fast build.
	sh.refused("", strings.Replace(build, `-tags "$TAGS"`, "-tags fast", 1)+" && ./bin/pipeline", "build tags")

	// Editing a package outside work's closure keeps its identity.
	appendFile(t, dir, "plot/plot.go", "\n// edited\n")
	if got := sh.must("", recipe); got != first {
		t.Errorf("editing plot changed work's identity: %q -> %q", first, got)
	}
	appendFile(t, dir, "work/work.go", "\n// edited\n")
	edited := sh.must("", recipe)
	if edited == first {
		t.Errorf("editing work did not change its identity")
	}

	// Tags: the one-step -stamp form prints the same stamp as -stamp-of.
	stamp := sh.must("fast", generate+" -stamp")
	if stampOf := sh.must("", "go run ./pipeline/codeid/gen -stamp-of pipeline/codeid/manifest/manifest.json"); stamp != stampOf {
		t.Errorf("-stamp printed %q, -stamp-of %q", stamp, stampOf)
	}
	fast := sh.must("fast", recipe)
	if !strings.HasSuffix(fast, " tags=fast") || strings.Fields(fast)[0] == strings.Fields(edited)[0] {
		t.Errorf("with -tags fast the binary printed %q (without: %q); want another ID and tags=fast", fast, edited)
	}
}

// xxhashGoSum returns this module's go.sum lines for xxhash, skipping the
// test if the module is not in the module cache (the test never downloads).
func xxhashGoSum(t *testing.T) string {
	t.Helper()
	root, err := moduleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "github.com/cespare/xxhash/v2 v2.3.0") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("go.sum lines for xxhash v2.3.0: %q", lines)
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	cache := strings.TrimSpace(string(out))
	for _, p := range []string{
		filepath.Join(cache, "github.com", "cespare", "xxhash", "v2@v2.3.0", "xxhash.go"),
		filepath.Join(cache, "cache", "download", "github.com", "cespare", "xxhash", "v2", "@v", "v2.3.0.mod"),
	} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("xxhash v2.3.0 not in the module cache (%v); run `go mod download` in the module", err)
		}
	}
	return strings.Join(lines, "\n") + "\n"
}
