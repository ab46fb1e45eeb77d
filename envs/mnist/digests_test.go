package mnist

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// SHA256SUMS (read by fetch.sh) and the constants in digests.go (read by
// ReadDir) record the same four digests, in File order.
func TestSHA256SUMSMatchesDigests(t *testing.T) {
	f, err := os.Open("SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec := RecordedDigests()
	var lines int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if lines >= len(Files()) {
			t.Fatalf("extra line %q", sc.Text())
		}
		file := Files()[lines]
		// sha256sum's format: digest, two spaces, name.
		if want := rec[file].String() + "  " + file.Name(); sc.Text() != want {
			t.Errorf("line %d = %q, want %q", lines+1, sc.Text(), want)
		}
		lines++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines != len(Files()) {
		t.Errorf("%d lines, want %d", lines, len(Files()))
	}
}

func TestRecordedDigests(t *testing.T) {
	rec := RecordedDigests()
	seen := map[Digest]bool{}
	for _, f := range Files() {
		if len(f.Name()) == 0 || f.String() != f.Name() || len(rec[f].String()) != 64 || seen[rec[f]] {
			t.Errorf("%v: digest %v", f, rec[f])
		}
		seen[rec[f]] = true
	}
	if rec[TrainImages].String() != "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db" {
		t.Errorf("train images digest %v", rec[TrainImages])
	}
}

// fetch.sh is valid POSIX sh, reads SHA256SUMS, packs the recorded package,
// and refuses to run without a destination.
func TestFetchScript(t *testing.T) {
	src, err := os.ReadFile("fetch.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"PKG=" + NpmPackage, "SHA256SUMS", "npm pack", "package/data/", "gunzip"} {
		if !strings.Contains(string(src), s) {
			t.Errorf("fetch.sh does not contain %q", s)
		}
	}
	if st, err := os.Stat("fetch.sh"); err != nil || st.Mode()&0o111 == 0 {
		t.Errorf("fetch.sh is not executable (%v)", err)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	if out, err := exec.Command(sh, "-n", "fetch.sh").CombinedOutput(); err != nil {
		t.Errorf("sh -n fetch.sh: %v\n%s", err, out)
	}
	out, err := exec.Command(sh, "fetch.sh").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "usage:") {
		t.Errorf("fetch.sh without arguments: %v\n%s", err, out)
	}
}

// With the real files present (after `make data`), fetch.sh is idempotent:
// it verifies them and does nothing, without the network.
func TestFetchScriptIdempotent(t *testing.T) {
	dir := realDataDir(t)
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	before := listDir(t, dir)
	out, err := exec.Command(sh, "fetch.sh", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "nothing to do") {
		t.Fatalf("fetch.sh %s: %v\n%s", dir, err, out)
	}
	if after := listDir(t, dir); after != before {
		t.Errorf("fetch.sh changed %s:\n%s\n->\n%s", dir, before, after)
	}
}

func listDir(t *testing.T, dir string) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(e.Name() + " " + info.ModTime().String() + "\n")
	}
	return b.String()
}

// realDataDir returns the repository's .data/mnist when it holds the
// verified real files, and skips the test otherwise.
func realDataDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", DefaultDataDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range Files() {
		if _, err := os.Stat(filepath.Join(dir, f.Name())); err != nil {
			t.Skipf("real MNIST not found in %s (%s)", dir, FetchHint)
		}
	}
	return dir
}
