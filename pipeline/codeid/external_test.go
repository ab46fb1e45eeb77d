package codeid

import (
	"archive/zip"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeProxy writes a file-system module proxy serving example.com/ext
// v1.0.0 (package example.com/ext/x) and returns its GOPROXY URL.
func writeProxy(t *testing.T) string {
	t.Helper()
	proxy := t.TempDir()
	const mod, ver = "example.com/ext", "v1.0.0"
	vdir := filepath.Join(proxy, filepath.FromSlash(mod), "@v")
	gomod := "module " + mod + "\n\ngo 1.26\n"
	writeFiles(t, vdir, map[string]string{
		"list":        ver + "\n",
		ver + ".info": `{"Version":"` + ver + `","Time":"2024-01-01T00:00:00Z"}`,
		ver + ".mod":  gomod,
	})
	f, err := os.Create(filepath.Join(vdir, ver+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, body := range map[string]string{
		"go.mod": gomod,
		"x/x.go": "package x\n\n// X returns 42.\nfunc X() int { return 42 }\n",
	} {
		w, err := zw.Create(mod + "@" + ver + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return "file://" + filepath.ToSlash(proxy)
}

// writeModuleWithDeps writes example.com/m2: package p imports the proxied
// module example.com/ext, package q imports example.com/local, replaced by
// the directory ./local; the command imports both. No network is used: the
// proxy is a local directory and the module cache a temporary one.
func writeModuleWithDeps(t *testing.T) string {
	t.Helper()
	offlineGo(t)
	t.Setenv("GOPROXY", writeProxy(t))
	t.Setenv("GOSUMDB", "off")
	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("GOFLAGS", "-mod=mod -modcacherw")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod": `module example.com/m2

go 1.26

require (
	example.com/ext v1.0.0
	example.com/local v0.0.0
)

replace example.com/local => ./local
`,
		"p/p.go":        "package p\n\nimport \"example.com/ext/x\"\n\n// P returns x.X.\nfunc P() int { return x.X() }\n",
		"q/q.go":        "package q\n\nimport \"example.com/local/l\"\n\n// Q returns l.L.\nfunc Q() int { return l.L() }\n",
		"cmd/m/main.go": "package main\n\nimport (\n\t\"example.com/m2/p\"\n\t\"example.com/m2/q\"\n)\n\nfunc main() { _, _ = p.P(), q.Q() }\n",
		"local/go.mod":  "module example.com/local\n\ngo 1.26\n",
		"local/l/l.go":  "package l\n\n// L returns 7.\nfunc L() int { return 7 }\n",
		"local/l/l2.go": "package l\n",
	})
	return dir
}

func goSumLine(t *testing.T, dir, prefix string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, prefix+" ") {
			return l
		}
	}
	t.Fatalf("go.sum has no line %q:\n%s", prefix, data)
	return ""
}

func TestExternalModulesInClosure(t *testing.T) {
	dir := writeModuleWithDeps(t)
	data, err := Generate(dir, nil, []string{"./cmd/m"})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	m, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	sum := strings.Fields(goSumLine(t, dir, "example.com/ext v1.0.0"))[2]
	if !strings.HasPrefix(sum, "h1:") {
		t.Fatalf("unexpected go.sum hash %q", sum)
	}

	idP := closure(t, m, "example.com/m2/p")
	if want := "mod example.com/ext@v1.0.0 " + sum; !slices.Contains(idP.Lines, want) {
		t.Errorf("Closure(p).Lines = %q, want %q", idP.Lines, want)
	}
	idQ := closure(t, m, "example.com/m2/q")
	var localLine string
	for _, l := range idQ.Lines {
		if strings.HasPrefix(l, "mod example.com/ext") {
			t.Errorf("Closure(q) contains ext, which q does not import: %q", l)
		}
		if strings.HasPrefix(l, "mod example.com/local@v0.0.0=>./local xxh64-") {
			localLine = l
		}
	}
	if localLine == "" {
		t.Fatalf("Closure(q).Lines = %q, want a directory-replaced example.com/local line", idQ.Lines)
	}
	if slices.ContainsFunc(idP.Lines, func(l string) bool { return strings.Contains(l, "example.com/local") }) {
		t.Errorf("Closure(p) contains example.com/local: %q", idP.Lines)
	}

	// Editing the directory replacement changes q's identity, not p's.
	appendFile(t, dir, "local/l/l2.go", "\n// edited\n")
	data2, err := Generate(dir, nil, []string{"./cmd/m"})
	if err != nil {
		t.Fatal(err)
	}
	m2, err := Parse(data2)
	if err != nil {
		t.Fatal(err)
	}
	if closure(t, m2, "example.com/m2/q").ID == idQ.ID {
		t.Errorf("editing a directory-replaced module did not change Closure(q)")
	}
	if closure(t, m2, "example.com/m2/p").ID != idP.ID {
		t.Errorf("editing example.com/local changed Closure(p)")
	}
}

func TestMissingGoSumLineIsReported(t *testing.T) {
	dir := writeModuleWithDeps(t)
	// Vendor the dependencies, then drop the module's go.sum line: in vendor
	// mode go list does not need go.sum, so only Generate can notice.
	for _, args := range [][]string{{"mod", "tidy"}, {"mod", "vendor"}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, out)
		}
	}
	keep := goSumLine(t, dir, "example.com/ext v1.0.0/go.mod")
	writeFiles(t, dir, map[string]string{"go.sum": keep + "\n"})
	t.Setenv("GOFLAGS", "-mod=vendor")
	_, err := Generate(dir, nil, []string{"./cmd/m"})
	if !errors.Is(err, ErrMissingSum) {
		t.Fatalf("Generate without the go.sum h1 line: err = %v, want ErrMissingSum", err)
	}
	if !strings.Contains(err.Error(), "example.com/ext@v1.0.0") {
		t.Errorf("error does not name the module: %v", err)
	}
}

func TestReadGoSum(t *testing.T) {
	path := filepath.Join(t.TempDir(), "go.sum")
	writeFiles(t, filepath.Dir(path), map[string]string{"go.sum": "" +
		"example.com/a v1.0.0 h1:AAA=\n" +
		"example.com/a v1.0.0/go.mod h1:MOD=\n" +
		"example.com/b v0.1.0/go.mod h1:ONLYMOD=\n" +
		"garbage line\n"})
	sums, err := readGoSum(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != 1 || sums["example.com/a v1.0.0"] != "h1:AAA=" {
		t.Errorf("readGoSum = %v, want only example.com/a v1.0.0 -> h1:AAA=", sums)
	}
	if sums, err := readGoSum(filepath.Join(t.TempDir(), "go.sum")); err != nil || len(sums) != 0 {
		t.Errorf("readGoSum of a missing file = %v, %v; want empty, nil", sums, err)
	}
}
