package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"zorepro/pipeline/bundle/bundletest"
	"zorepro/pipeline/events"
	"zorepro/pipeline/store"
)

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// storeFiles hashes every file under dir, so that a test can show a
// refused import left a store byte for byte as it was.
func storeFiles(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			out[p] = sha256.Sum256(b)
		}
		return nil
	})
	return out
}

// A smoke store's results move to an empty store through a bundle: every
// byte checked, nothing to run there, audit and verify as on the store
// that computed them; a second import writes nothing; a tampered bundle
// and one that contradicts the store are refused with names, the store
// unchanged (issue 30).
func TestBundleRoundTripTamperAndDivergence(t *testing.T) {
	t.Parallel() // no clock in its checks; see tests.md
	bin, root, dir, common := smokeStore(t)
	file := filepath.Join(dir, "smoke.bundle")
	out, code := cli(t, bin, root, withFlags([]string{"export", "report", "--to", file}, common...)...)
	if code != 0 || !strings.Contains(out, "exported 257 tasks (profile smoke") {
		t.Fatalf("export: exit %d\n%s", code, out)
	}
	again := filepath.Join(dir, "again.bundle")
	cli(t, bin, root, withFlags([]string{"export", "report", "--to", again}, common...)...)
	if a, b := readFile(t, file), readFile(t, again); !bytes.Equal(a, b) {
		t.Errorf("two exports of the same store differ (%d and %d bytes)", len(a), len(b))
	}
	other := []string{"--dag", filepath.Join(root, "dag.yaml"), "--store", filepath.Join(dir, "other"), "--figures", filepath.Join(dir, "other-fig")}
	js, code := cliStdout(t, bin, root, withFlags([]string{"import", file, "--json"}, other...)...)
	var sum struct {
		Imported, Present, Other []string
		Run                      uint64
	}
	if err := json.Unmarshal([]byte(js), &sum); err != nil || code != 0 || len(sum.Imported) != 257 || len(sum.Other) != 0 {
		t.Fatalf("import into an empty store: %v (exit %d)\n%s", err, code, js)
	}
	res, _ := pipelineRun(t, bin, root, append(other, "--profile", "smoke")...)
	if len(res.Executed) != 0 || len(res.Cached) != 257 {
		t.Fatalf("a run after the import executed %v (%d cached)", res.Executed, len(res.Cached))
	}
	for _, args := range [][]string{{"audit", "fig2-linreg.svg"}, {"audit", "report.html"}, {"verify", "--sample", "6", "--seed", "3"},
		{"replay", "train/mujoco/horizon=15/method=arsv1/name=swimmer/seed=81856320"}} {
		if out, code := cli(t, bin, root, withFlags(args, other...)...); code != 0 {
			t.Errorf("%v on the imported store: exit %d\n%s", args, code, out)
		}
	}
	before := storeFiles(t, filepath.Join(dir, "other"))
	js, code = cliStdout(t, bin, root, withFlags([]string{"import", file, "--json"}, other...)...)
	if err := json.Unmarshal([]byte(js), &sum); err != nil || code != 0 || len(sum.Imported) != 0 || len(sum.Present) != 257 || sum.Run != 0 {
		t.Fatalf("a second import: %v (exit %d)\n%s", err, code, js)
	}

	checkVolumes(t, bin, root, dir, file, common)

	// A bundle with one byte of one output changed is refused before
	// anything is written.
	tampered := filepath.Join(dir, "tampered.bundle")
	changed := ""
	bundletest.Rewrite(t, file, tampered, func(name string, data []byte) []byte {
		if changed == "" && strings.HasPrefix(name, "cas/") && len(data) > 10 {
			changed = name
			data = bytes.Clone(data)
			data[len(data)/2] ^= 1
		}
		return data
	})
	out, code = cli(t, bin, root, withFlags([]string{"import", tampered}, other...)...)
	if code != 2 || !strings.Contains(out, changed) || !strings.Contains(out, "damaged or altered bundle") {
		t.Errorf("import of a tampered bundle: exit %d, want 2 naming %s\n%s", code, changed, out)
	}

	// A bundle whose task the store records, for the same action, with
	// another output: two machines computed different bytes. Made here by
	// recording another output for one task's action in a copy of the
	// store, then importing the original bundle there.
	task := "train/linreg/d=10/method=sgd/seed=5488"
	diverged := filepath.Join(dir, "diverged")
	if out, err := exec.Command("cp", "-a", filepath.Join(dir, "store"), diverged).CombinedOutput(); err != nil {
		t.Fatalf("copy the store: %v\n%s", err, out)
	}
	forgeOutput(t, diverged, task)
	divergedBefore := storeFiles(t, diverged)
	out, code = cli(t, bin, root, "import", file, "--dag", filepath.Join(root, "dag.yaml"), "--store", diverged)
	if code != 1 || !strings.Contains(out, task) || !strings.Contains(out, "computed other bytes for the same action") || !strings.Contains(out, "nothing imported") {
		t.Errorf("import of a divergent bundle: exit %d, want 1 naming %s\n%s", code, task, out)
	}
	for _, c := range []struct {
		name          string
		before, after map[string][32]byte
	}{{"other", before, storeFiles(t, filepath.Join(dir, "other"))}, {"diverged", divergedBefore, storeFiles(t, diverged)}} {
		if len(c.before) != len(c.after) {
			t.Errorf("store %s: %d files before, %d after a refused or empty import", c.name, len(c.before), len(c.after))
		}
		for p, h := range c.before {
			if c.after[p] != h {
				t.Errorf("store %s: %s changed", c.name, p)
			}
		}
	}
}

// checkVolumes exports the smoke store's report cut into volumes (a
// GitHub release asset must be under 2 GiB): their concatenation is the
// bundle in one file, byte for byte, an import of their index records
// every task, and a volume damaged in the download is named.
func checkVolumes(t *testing.T, bin, root, dir, file string, common []string) {
	t.Helper()
	vdir := filepath.Join(dir, "volumes")
	os.Mkdir(vdir, 0o755)
	index := filepath.Join(vdir, "smoke.bundle")
	out, code := cli(t, bin, root, withFlags([]string{"export", "report", "--to", index, "--volume-size", "1MiB"}, common...)...)
	vols, _ := filepath.Glob(index + ".*")
	if code != 0 || len(vols) < 2 || !strings.Contains(out, fmt.Sprintf("in %d volumes of at most 1.00 MiB, smoke.bundle.001 to smoke.bundle.%03d", len(vols), len(vols))) {
		t.Fatalf("export in volumes: exit %d, volumes %v\n%s", code, vols, out)
	}
	var joined []byte
	for _, v := range vols {
		joined = append(joined, readFile(t, v)...)
	}
	if !bytes.Equal(joined, readFile(t, file)) {
		t.Errorf("the volumes joined (%d bytes) are not the bundle in one file (%d bytes)", len(joined), len(readFile(t, file)))
	}
	third := []string{"--dag", filepath.Join(root, "dag.yaml"), "--store", filepath.Join(dir, "third"), "--figures", filepath.Join(dir, "third-fig")}
	var sum struct{ Imported []string }
	js, code := cliStdout(t, bin, root, withFlags([]string{"import", index, "--json"}, third...)...)
	if err := json.Unmarshal([]byte(js), &sum); err != nil || code != 0 || len(sum.Imported) != 257 {
		t.Fatalf("import of the volumes' index into an empty store: %v (exit %d)\n%s", err, code, js)
	}
	for _, c := range []struct{ size, want string }{{"1000", "below the least"}, {"2TB", "is not a positive size"}, {"-1MiB", "is not a positive size"}} {
		if out, code := cli(t, bin, root, withFlags([]string{"export", "report", "--to", filepath.Join(dir, "x.bundle"), "--volume-size", c.size}, common...)...); code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("export --volume-size %s: exit %d, want 2 and %q\n%s", c.size, code, c.want, out)
		}
	}
	// A volume damaged in the download is named; nothing is written.
	b := readFile(t, vols[1])
	b[len(b)/2] ^= 1
	os.WriteFile(vols[1], b, 0o644)
	other2 := []string{"--dag", filepath.Join(root, "dag.yaml"), "--store", filepath.Join(dir, "fourth")}
	if out, code := cli(t, bin, root, withFlags([]string{"import", index}, other2...)...); code != 2 || !strings.Contains(out, "volume smoke.bundle.002 (2 of") || !strings.Contains(out, "SHA-256") {
		t.Errorf("import with a damaged volume: exit %d, want 2 naming smoke.bundle.002\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "fourth", "events.db")); err == nil {
		t.Errorf("an import refused for a damaged volume created a store")
	}
}

// forgeOutput records, in a new run of the store, another output for the
// action of task's latest run: what a machine that computed other bytes
// would have recorded.
func forgeOutput(t *testing.T, dir, task string) {
	t.Helper()
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	id, err := st.Put([]byte("other bytes\n"))
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := st.Put([]byte("zorepro-outputs v1\ntrajectory " + id.String() + " 12\n"))
	if err != nil {
		t.Fatal(err)
	}
	log, err := events.Open(filepath.Join(dir, "events.db"), events.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	var action string
	states, _ := log.LastStates()
	for _, s := range states {
		if s.Task == task {
			action = s.Action
		}
	}
	run, err := log.BeginRun(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := log.NewWriter(events.WriterOptions{})
	w.Append(events.Event{Type: events.TypeState, Run: run, Task: task, State: events.StateDone, Action: action, Output: manifest.String()})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// A complete recorded profile publishes its figures, tables and report
// with a manifest of their content IDs; verify --against compares a store
// with it and names a file that differs (issue 30).
func TestPublishAndVerifyAgainst(t *testing.T) {
	t.Parallel() // no clock in its checks; see tests.md
	bin, root, dir, common := smokeStore(t)
	pub := filepath.Join(dir, "published")
	out, code := cli(t, bin, root, withFlags([]string{"publish", "--to", pub}, common...)...)
	files, _ := os.ReadDir(pub)
	n := len(files) - 1 // beside manifest.json
	if code != 0 || n < 36 || !strings.Contains(out, fmt.Sprintf("published %d files of profile smoke (257 tasks", n)) {
		t.Fatalf("publish: exit %d, %d files\n%s", code, n, out)
	}
	for _, f := range []string{"manifest.json", "report.html", "claims.json", "fig3d-horizon.png", "fig2-linreg-seeds.csv"} {
		if _, err := os.Stat(filepath.Join(pub, f)); err != nil {
			t.Errorf("the published result lacks %s", f)
		}
	}
	if out, code := cli(t, bin, root, withFlags([]string{"verify", "--against", pub}, common...)...); code != 0 || !strings.Contains(out, fmt.Sprintf("%d of %d published files", n, n)) {
		t.Fatalf("verify --against the store's own publication: exit %d\n%s", code, out)
	}
	// verify --against reads the figures this binary and dag.yaml record,
	// not a figure task's latest run: after another dag.yaml's run of
	// plot/fig3c-lqr in the same store (another profile's, or an older
	// revision's, as when horizon-long shares the paper run's store) the
	// publication still verifies, and that other dag.yaml is told where it
	// differs.
	otherDag := append([]string(nil), common...)
	otherDag[1] = writeFile(t, dir, "dag-other.yaml", strings.Replace(string(readFile(t, common[1])), "LQR: samples until", "LQR (another title): samples until", 1))
	otherDag[7] = filepath.Join(dir, "fig-other")
	pipelineRun(t, bin, root, append([]string{"plot/fig3c-lqr"}, otherDag...)...)
	if out, code := cli(t, bin, root, withFlags([]string{"verify", "--against", pub}, common...)...); code != 0 || !strings.Contains(out, fmt.Sprintf("%d of %d published files", n, n)) {
		t.Errorf("verify --against after another dag.yaml's run of a plot in the same store: exit %d\n%s", code, out)
	}
	if out, code := cli(t, bin, root, withFlags([]string{"verify", "--against", pub}, otherDag...)...); code != 1 || !strings.Contains(out, "differs       fig3c-lqr.svg") || !strings.Contains(out, "report: not recorded for this binary and dag.yaml") {
		t.Errorf("verify --against with the other dag.yaml: exit %d, want 1 naming fig3c-lqr.svg and the report it never ran\n%s", code, out)
	}
	verifyDamagedPublications(t, bin, root, pub, n, common)
	verifyOtherMachinesPublication(t, bin, root, pub, n, common)
	// A store missing tasks cannot be published.
	partial := []string{"--dag", filepath.Join(root, "dag.yaml"), "--profile", "smoke", "--store", filepath.Join(dir, "partial"), "--figures", filepath.Join(dir, "partial-fig")}
	pipelineRun(t, bin, root, append([]string{"plot/fig3c-lqr"}, partial...)...)
	if out, code := cli(t, bin, root, withFlags([]string{"publish", "--to", filepath.Join(dir, "p2")}, partial...)...); code != 1 || !strings.Contains(out, "a published result is the whole profile") {
		t.Errorf("publish of a partial store: exit %d\n%s", code, out)
	}
}

// verifyDamagedPublications checks that verify --against never vouches for
// a published copy whose bytes are not its manifest's, nor for a file the
// manifest does not list, nor for a listed file that is gone, and that
// publish will not mix its files with another publication's. It leaves
// pub as it found it.
func verifyDamagedPublications(t *testing.T, bin, root, pub string, n int, common []string) {
	t.Helper()
	mf := filepath.Join(pub, "manifest.json")
	manifest := readFile(t, mf)
	svg := filepath.Join(pub, "fig3c-lqr.svg")
	orig := readFile(t, svg)
	edited := bytes.Replace(orig, []byte("\n"), []byte("\r\n"), 1) // what a checkout with autocrlf does
	for _, c := range []struct {
		name, want, counts string
		damage             func() error
		mend               func() error
	}{
		{"an altered copy", "fig3c-lqr.svg: published copy altered", fmt.Sprintf("%d of %d", n-1, n),
			func() error { return os.WriteFile(svg, edited, 0o644) }, func() error { return os.WriteFile(svg, orig, 0o644) }},
		{"a missing copy", "fig3c-lqr.svg: missing from the published result", fmt.Sprintf("%d of %d", n-1, n),
			func() error { return os.Remove(svg) }, func() error { return os.WriteFile(svg, orig, 0o644) }},
		{"a manifest naming a path", "../escape.csv: refused: the manifest names a path", fmt.Sprintf("%d of %d", n, n+1),
			func() error {
				return os.WriteFile(mf, []byte(strings.Replace(string(manifest), `"figures": {`, `"figures": {"../escape.csv": "xxh64-0000000000000000", `, 1)), 0o644)
			},
			func() error { return os.WriteFile(mf, manifest, 0o644) }},
		{"an unlisted file", "stale.png: not in the manifest", fmt.Sprintf("%d of %d", n, n+1),
			func() error { return os.WriteFile(filepath.Join(pub, "stale.png"), orig, 0o644) }, func() error { return os.Remove(filepath.Join(pub, "stale.png")) }},
	} {
		if err := c.damage(); err != nil {
			t.Fatal(err)
		}
		out, code := cli(t, bin, root, withFlags([]string{"verify", "--against", pub}, common...)...)
		if code != 1 || !strings.Contains(out, c.want) || !strings.Contains(out, c.counts) {
			t.Errorf("verify --against a result with %s: exit %d, want 1 and %q\n%s", c.name, code, c.want, out)
		}
		if c.name == "an unlisted file" {
			out, code := cli(t, bin, root, withFlags([]string{"publish", "--to", pub}, common...)...)
			if code != 2 || !strings.Contains(out, "holds stale.png, which this publication does not write") {
				t.Errorf("publish into a directory holding another file: exit %d, want 2\n%s", code, out)
			}
		}
		if err := c.mend(); err != nil {
			t.Fatal(err)
		}
	}
}

// verifyOtherMachinesPublication checks a publication from a machine that
// computed other bytes: its copy and manifest agree, the store here
// differs, and verify --against names the file with both content IDs.
func verifyOtherMachinesPublication(t *testing.T, bin, root, pub string, n int, common []string) {
	t.Helper()
	var m struct{ Figures map[string]string }
	mf := filepath.Join(pub, "manifest.json")
	b := readFile(t, mf)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	old := m.Figures["fig3c-lqr.csv"]
	other := append(readFile(t, filepath.Join(pub, "fig3c-lqr.csv")), "1,2\n"...)
	otherID := store.Sum(other).String()
	altered := strings.Replace(string(b), old, otherID, 1)
	if err := os.WriteFile(mf, []byte(altered), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pub, "fig3c-lqr.csv"), other, 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := cli(t, bin, root, withFlags([]string{"verify", "--against", pub}, common...)...)
	if code != 1 || !strings.Contains(out, "differs       fig3c-lqr.csv (published "+otherID+", here "+old+")") || !strings.Contains(out, fmt.Sprintf("%d of %d", n-1, n)) {
		t.Errorf("verify --against a result whose fig3c-lqr.csv differs: exit %d\n%s", code, out)
	}
}
