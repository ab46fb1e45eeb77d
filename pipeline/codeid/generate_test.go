package codeid

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestClosureContainsExactlyTheImportClosure(t *testing.T) {
	dir := writeModule(t)
	_, m := generate(t, dir)

	if got, want := m.Packages(), []string{pkgA, pkgB, pkgC, pkgMain}; !slices.Equal(got, want) {
		t.Fatalf("Packages() = %v, want %v", got, want)
	}
	if got, want := m.Roots(), []string{pkgMain}; !slices.Equal(got, want) {
		t.Fatalf("Roots() = %v, want %v", got, want)
	}
	idB := closure(t, m, pkgB)
	want := []string{
		"pkg " + pkgA + " " + pkgHash(t, m, pkgA),
		"pkg " + pkgB + " " + pkgHash(t, m, pkgB),
	}
	if !slices.Equal(idB.Lines, want) {
		t.Fatalf("Closure(b).Lines = %q, want %q", idB.Lines, want)
	}
	if want := linesDigest(want); idB.ID != want {
		t.Fatalf("Closure(b).ID = %s, want xxh64 of its lines %s", idB.ID, want)
	}
	idMain := closure(t, m, pkgMain)
	for _, p := range []string{pkgA, pkgB, pkgC, pkgMain} {
		if !hasPkgLine(idMain, p) {
			t.Errorf("Closure(main) lacks %s: %q", p, idMain.Lines)
		}
	}
	// Order and repetition of roots do not matter.
	if got := closure(t, m, pkgC, pkgB, pkgC); got.ID != closure(t, m, pkgB, pkgC).ID {
		t.Errorf("Closure depends on root order or repetition")
	}
	if p, _ := m.Package(pkgB); !slices.Equal(p.Imports, []string{pkgA}) || !slices.Contains(p.Deps, pkgA) {
		t.Errorf("package b: imports %v, deps %v; want imports [a] and a in deps", p.Imports, p.Deps)
	}
}

func TestEditingOnePackageChangesOnlyClosuresContainingIt(t *testing.T) {
	dir := writeModule(t)
	_, before := generate(t, dir)
	appendFile(t, dir, "c/c.go", "\n// A new comment still changes the source.\n")
	_, after := generate(t, dir)

	for _, p := range []string{pkgA, pkgB} {
		if pkgHash(t, before, p) != pkgHash(t, after, p) {
			t.Errorf("hash of %s changed after editing c", p)
		}
	}
	if pkgHash(t, before, pkgC) == pkgHash(t, after, pkgC) {
		t.Errorf("hash of c unchanged after editing c/c.go")
	}
	for _, tc := range []struct {
		roots   []string
		changes bool
	}{
		{[]string{pkgA}, false},
		{[]string{pkgB}, false},
		{[]string{pkgC}, true},
		{[]string{pkgA, pkgC}, true},
		{[]string{pkgMain}, true},
	} {
		b, a := closure(t, before, tc.roots...), closure(t, after, tc.roots...)
		if changed := a.ID != b.ID; changed != tc.changes {
			t.Errorf("Closure(%v) changed = %v, want %v", tc.roots, changed, tc.changes)
		}
	}
}

func TestEditingATestFileChangesNothing(t *testing.T) {
	dir := writeModule(t)
	before, m := generate(t, dir)
	if slices.Contains(fileNames(t, m, pkgA), "a_test.go") {
		t.Fatalf("a_test.go counted in package a")
	}
	appendFile(t, dir, "a/a_test.go", "\nfunc TestMore(t *testing.T) {}\n")
	after, _ := generate(t, dir)
	if !bytes.Equal(before, after) {
		t.Errorf("manifest changed after editing a _test.go file")
	}
}

func TestBuildTagsDecideWhichFilesCount(t *testing.T) {
	dir := writeModule(t)
	_, plain := generate(t, dir)
	if got := fileNames(t, plain, pkgC); !slices.Equal(got, []string{"c.go"}) {
		t.Fatalf("files of c without tags = %v, want [c.go]", got)
	}
	if got := plain.Tags(); len(got) != 0 {
		t.Fatalf("Tags() = %v, want none", got)
	}

	// Editing the excluded file changes nothing.
	appendFile(t, dir, "c/extra.go", "\n// edited\n")
	_, edited := generate(t, dir)
	if closure(t, plain, pkgMain).ID != closure(t, edited, pkgMain).ID {
		t.Errorf("editing a file excluded by build tags changed the identity")
	}

	// With the tag, it counts; tags are normalized.
	_, tagged := generate(t, dir, "extra, other", "extra")
	if got := fileNames(t, tagged, pkgC); !slices.Equal(got, []string{"c.go", "extra.go"}) {
		t.Fatalf("files of c with -tags extra = %v, want [c.go extra.go]", got)
	}
	if got, want := tagged.Tags(), []string{"extra", "other"}; !slices.Equal(got, want) {
		t.Errorf("Tags() = %v, want %v", got, want)
	}
	if pkgHash(t, plain, pkgC) == pkgHash(t, tagged, pkgC) {
		t.Errorf("hash of c did not change with -tags extra")
	}
	if pkgHash(t, plain, pkgA) != pkgHash(t, tagged, pkgA) {
		t.Errorf("hash of a changed with a tag it does not use")
	}
	if !slices.Contains(tagged.BuildLines(), "tags extra,other") {
		t.Errorf("BuildLines() = %q, want a line \"tags extra,other\"", tagged.BuildLines())
	}
}

func TestEmbeddedFileCounts(t *testing.T) {
	dir := writeModule(t)
	_, before := generate(t, dir)
	if got := fileNames(t, before, pkgA); !slices.Equal(got, []string{"a.go", "data.txt"}) {
		t.Fatalf("files of a = %v, want [a.go data.txt]", got)
	}
	writeFiles(t, dir, map[string]string{"a/data.txt": "changed\n"})
	_, after := generate(t, dir)
	if pkgHash(t, before, pkgA) == pkgHash(t, after, pkgA) {
		t.Errorf("hash of a unchanged after editing its embedded file")
	}
	if closure(t, before, pkgB).ID == closure(t, after, pkgB).ID {
		t.Errorf("Closure(b) unchanged after editing a file embedded by its dependency a")
	}
	if closure(t, before, pkgC).ID != closure(t, after, pkgC).ID {
		t.Errorf("Closure(c) changed after editing a file c does not depend on")
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	dir := writeModule(t)
	first, _ := generate(t, dir)
	// From a sub-directory: the module root is found by walking up.
	second, err := Generate(filepath.Join(dir, "a"), nil, []string{"./cmd/m"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Fatalf("two generations differ:\n%s\n---\n%s", first, second)
	}
	if bytes.Contains(first, []byte(dir)) {
		t.Errorf("manifest contains the absolute module directory %s", dir)
	}
	// Default package pattern.
	writeFiles(t, dir, map[string]string{"cmd/pipeline/main.go": "package main\n\nimport _ \"example.com/m/c\"\n\nfunc main() {}\n"})
	data, err := Generate(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Packages(), []string{pkgC, "example.com/m/cmd/pipeline"}; !slices.Equal(got, want) {
		t.Errorf("default pattern: Packages() = %v, want %v", got, want)
	}
}

func TestSkippedFileIsNotHashed(t *testing.T) {
	dir := writeModule(t)
	// Package a embeds data.txt: skipping it, as the generator skips the
	// manifest it overwrites, makes a's hash independent of its content.
	skip := filepath.Join(dir, "a", "data.txt")
	first, err := Generate(dir, nil, []string{"./cmd/m"}, skip)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(first)
	if err != nil {
		t.Fatal(err)
	}
	if got := fileNames(t, m, pkgA); !slices.Equal(got, []string{"a.go"}) {
		t.Fatalf("files of a with data.txt skipped = %v, want [a.go]", got)
	}
	writeFiles(t, dir, map[string]string{"a/data.txt": "rewritten\n"})
	second, err := Generate(dir, nil, []string{"./cmd/m"}, skip, filepath.Join(dir, "does-not-exist"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Errorf("manifest depends on the content of a skipped file")
	}
}

func TestGenerateReportsGoListErrors(t *testing.T) {
	dir := writeModule(t)
	writeFiles(t, dir, map[string]string{"b/broken.go": "package b\n\nimport \"example.com/m/missing\"\n"})
	_, err := Generate(dir, nil, []string{"./cmd/m"})
	if !errors.Is(err, ErrGoList) {
		t.Fatalf("Generate with a missing import: err = %v, want ErrGoList", err)
	}
	if !strings.Contains(err.Error(), "example.com/m/missing") {
		t.Errorf("error does not name the missing package: %v", err)
	}
}

func TestWriteFileIsAtomicAndIdempotent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "manifest.json")
	if err := WriteFile(path, []byte("one\n")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("two\n")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "two\n" {
		t.Fatalf("ReadFile = %q, %v; want \"two\\n\"", got, err)
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("two\n")); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) {
		t.Errorf("unchanged content was rewritten")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	if err := WriteFile(filepath.Join(dir, "no", "such", "dir", "m.json"), nil); err == nil {
		t.Errorf("WriteFile into a missing directory succeeded")
	}
}

func TestNormalizeTags(t *testing.T) {
	got := NormalizeTags([]string{"b,a", " c  a ", ""})
	if want := []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("NormalizeTags = %v, want %v", got, want)
	}
	if got := NormalizeTags(nil); got == nil || len(got) != 0 {
		t.Errorf("NormalizeTags(nil) = %#v, want empty non-nil", got)
	}
}
