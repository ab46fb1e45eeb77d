package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The reproduction report, as a person sees it: the smoke profile's
// report.html rendered by headless Chromium (Debian's chromium, which
// .ci/run installs) has every figure and every claim row in its DOM,
// draws a page that is not blank, and names nothing outside the file.
func TestReportInChromium(t *testing.T) {
	bin, root, dir, common := smokeStore(t)
	figDir := filepath.Join(dir, "fig")
	// pipeline report rebuilds it from the store: the same bytes, and the
	// verdicts on stdout.
	before, _ := os.ReadFile(filepath.Join(figDir, "report.html"))
	os.Remove(filepath.Join(figDir, "report.html"))
	out, code := cliStdout(t, bin, root, withFlags([]string{"report"}, common...)...)
	if after, _ := os.ReadFile(filepath.Join(figDir, "report.html")); code != 0 || !bytes.Equal(before, after) || !strings.Contains(out, "fig3a-crossover") {
		t.Fatalf("pipeline report: exit %d, same page %v\n%s", code, bytes.Equal(before, after), out)
	}
	// pipeline audit traces every number of the report: each figure's
	// points to their events, each claim recomputed bit for bit.
	out, code = cli(t, bin, root, withFlags([]string{"audit", "report.html"}, common...)...)
	if code != 0 || !regexp.MustCompile(`(\d+) of (\d+) claims recomputed, bit for bit`).MatchString(out) {
		t.Fatalf("audit report.html: exit %d\n%s", code, out)
	}
	if m := regexp.MustCompile(`(\d+) of (\d+) claims recomputed`).FindStringSubmatch(out); m[1] != m[2] || m[1] == "0" {
		t.Errorf("audit report.html: %s", m[0])
	}
	// On a store that lacks figures it runs nothing and says what to do.
	partial := []string{"--dag", filepath.Join(root, "dag.yaml"), "--profile", "smoke", "--store", filepath.Join(dir, "partial"), "--figures", filepath.Join(dir, "partial-fig")}
	pipelineRun(t, bin, root, append([]string{"plot/fig3c-lqr"}, partial...)...)
	out, code = cli(t, bin, root, withFlags([]string{"report"}, partial...)...)
	if code != exitFailed || !strings.Contains(out, "the report needs") || !strings.Contains(out, "pipeline run report --profile smoke") {
		t.Errorf("report on a partial store: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "partial-fig", "report.html")); err == nil {
		t.Error("report on a partial store wrote a page")
	}
	out, code = cli(t, bin, root, "report", "--store", filepath.Join(dir, "nothing"))
	if code == exitOK || !strings.Contains(out, "no event log") {
		t.Errorf("report on a store that does not exist: exit %d\n%s", code, out)
	}
	var doc struct {
		Claims []struct {
			ID, Figure, Verdict string
		}
		Figures []struct{ Name string }
		Counts  map[string]int
	}
	data, err := os.ReadFile(filepath.Join(figDir, "claims.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Claims) < 16 || len(doc.Figures) != 6 {
		t.Fatalf("claims.json: %d claims, %d figures", len(doc.Claims), len(doc.Figures))
	}
	page, err := os.ReadFile(filepath.Join(figDir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(figDir, "report.md"))
	for _, c := range doc.Claims {
		switch c.Verdict {
		case "holds", "fails", "inconclusive", "reported":
		default:
			t.Errorf("claim %s: verdict %q", c.ID, c.Verdict)
		}
		if !bytes.Contains(md, []byte("| "+c.ID+" |")) {
			t.Errorf("report.md lacks claim %s", c.ID)
		}
	}
	// Nothing is fetched: no src, no href but in-page anchors, no url() in
	// styles, no script.
	for _, re := range []string{`(?i)\ssrc\s*=`, `(?i)\shref\s*=\s*"[^#]`, `(?i)url\(`, `(?i)<script`, `(?i)<link`, `(?i)@import`} {
		if m := regexp.MustCompile(re).Find(page); m != nil {
			t.Errorf("report.html refers outside itself: %q", m)
		}
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium; .ci/run installs it)")
	}
	url := "file://" + filepath.Join(figDir, "report.html")
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--host-resolver-rules=MAP * ~NOTFOUND", "--user-data-dir=" + t.TempDir()}
	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(chromium, append(append(base, args...), url)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		done := make(chan struct{})
		var out []byte
		go func() { out, err = cmd.Output(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			cmd.Process.Kill()
			<-done
			t.Fatalf("chromium %v did not finish\n%s", args, stderr.String())
		}
		if err != nil {
			t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
		}
		return out
	}
	dom := string(run("--dump-dom"))
	if n := strings.Count(dom, `<tr class="claim `); n != len(doc.Claims) {
		t.Errorf("rendered DOM has %d claim rows, want %d", n, len(doc.Claims))
	}
	for _, f := range doc.Figures {
		i := strings.Index(dom, `<section id="fig-`+f.Name+`">`)
		if i < 0 || !strings.Contains(dom[i:], "<svg") {
			t.Errorf("rendered DOM lacks figure %s", f.Name)
		}
	}
	if n := strings.Count(dom, "<svg"); n < len(doc.Figures) {
		t.Errorf("rendered DOM has %d svg elements, want at least %d", n, len(doc.Figures))
	}
	shot := filepath.Join(t.TempDir(), "report.png")
	run("--screenshot="+shot, "--window-size=1200,2400")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	dark, total := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r+g+bl < 3*0xc000 {
				dark++
			}
			total++
		}
	}
	if frac := float64(dark) / float64(total); frac < 0.01 {
		t.Errorf("the screenshot is nearly blank: %.4f of its pixels are dark", frac)
	}
}
