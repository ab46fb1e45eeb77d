package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"image/png"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"zorepro/pipeline/dag"
	"zorepro/stages"
)

// The reproduction report, as a person sees it: the smoke profile's
// report.html rendered by headless Chromium (Debian's chromium, which
// .ci/run installs) has every figure and every claim row in its DOM,
// draws a page that is not blank, and names nothing outside the file.
func TestReportInChromium(t *testing.T) {
	bin, root, dir, common := smokeStore(t)
	figDir := filepath.Join(dir, "fig")
	checkReportCommand(t, bin, root, dir, common)
	var doc struct {
		Claims  []claimVerdict
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
	if len(doc.Claims) < 16 || len(doc.Figures) != len(paperAxes) {
		t.Fatalf("claims.json: %d claims, %d figures", len(doc.Claims), len(doc.Figures))
	}
	page, err := os.ReadFile(filepath.Join(figDir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(figDir, "report.md"))
	checkVerdictsExplained(t, doc.Claims, page, md)
	checkSelfContained(t, page)
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium; .ci/run installs it)")
	}
	url := "file://" + filepath.Join(figDir, "report.html")
	run := chromiumRunner(t, chromium, url, nil)
	dom := string(run("--dump-dom"))
	if n := strings.Count(dom, `<tr class="claim `); n != len(doc.Claims) {
		t.Errorf("rendered DOM has %d claim rows, want %d", n, len(doc.Claims))
	}
	for _, f := range doc.Figures {
		i := strings.Index(dom, `<section id="fig-`+f.Name+`">`)
		if i < 0 || !strings.Contains(dom[i:], "<svg") {
			t.Errorf("rendered DOM lacks figure %s", f.Name)
		}
		// Its provenance: every curve's seeds, and where its
		// hyperparameters come from.
		if end := strings.Index(dom[max(i, 0):], "</section>"); i >= 0 && end > 0 {
			sec := dom[i : i+end]
			if !strings.Contains(sec, "Hyperparameters: ") || !strings.Contains(sec, " seeds (") {
				t.Errorf("figure %s: its provenance lacks the seeds or the hyperparameters", f.Name)
			}
		}
	}
	// Fig. 3c shows the fraction of seeds that converged beside the
	// capped mean (issue 43).
	if i := strings.Index(dom, `<section id="fig-fig3c-lqr">`); i < 0 || !strings.Contains(dom[i:i+strings.Index(dom[i:], "</section>")], "Fraction of seeds that converged") {
		t.Error("fig3c-lqr's section lacks the fraction-converged view")
	}
	if n := strings.Count(dom, "<svg"); n < len(doc.Figures) {
		t.Errorf("rendered DOM has %d svg elements, want at least %d", n, len(doc.Figures))
	}
	checkFiguresForAReader(t, root, page, run)
	checkScaleAndNarrowLayout(t, page, doc.Claims, run)

	checkScreenshotNotBlank(t, run)
	checkFiguresWithoutTheirFont(t, page, chromium)
}

// pageText is one text element of a figure as the page renders it:
// its font size in CSS pixels and its box.
type pageText struct {
	Text       string
	Px         float64
	L, T, R, B float64
}

// figureLine is a line of a figure's text as a reader sees it: the plot
// package draws a superscript (10⁴, in a tick or an axis label) as its own
// smaller text after the text before it, and the rest of the line as
// another text after it.
type figureLine struct {
	text      string
	px, supPx float64 // the line's size, its exponents' smallest (+Inf: none)
}

// joinSuperscripts joins each run of texts that touch on the page, a
// smaller one after a larger one being its exponent, and a text of the
// line's size after an exponent its continuation. Touching allows a gap
// of 1 px, and across a line up to 0.15 em of the text before: the plot
// places an exponent where gonum's hinted metrics end its base, and the
// browser's unhinted advances can end it a pixel earlier (a caption's
// "2·10" is 1.1 px narrower in Chromium at 13.3 px than where its ² is
// drawn).
func joinSuperscripts(texts []pageText) []figureLine {
	var out []figureLine
	sup := strings.NewReplacer("0", "⁰", "1", "¹", "2", "²", "3", "³", "4", "⁴", "5", "⁵", "6", "⁶", "7", "⁷", "8", "⁸", "9", "⁹", "−", "⁻", "+", "⁺")
	touch := func(a, b pageText) bool {
		gap := max(1, 0.15*a.Px)
		return b.L <= a.R+gap && b.R >= a.L-1 && b.T <= a.B+1 && b.B >= a.T-1
	}
	afterSup := false
	for k, tx := range texts {
		if k > 0 && len(out) > 0 && touch(texts[k-1], tx) {
			l := &out[len(out)-1]
			switch {
			case tx.Px < l.px:
				l.text += sup.Replace(tx.Text)
				l.supPx = math.Min(l.supPx, tx.Px)
				afterSup = true
				continue
			case afterSup && tx.Px == l.px:
				l.text += tx.Text
				afterSup = false
				continue
			}
		}
		out = append(out, figureLine{text: tx.Text, px: tx.Px, supPx: math.Inf(1)})
		afterSup = false
	}
	return out
}

// claimVerdict is what the report tests read of a claim in claims.json.
type claimVerdict struct {
	ID, Figure, Verdict, Explanation string
}

// checkVerdictsExplained checks a report's verdicts: each one of the
// vocabulary, and every claim that does not hold saying why, with the
// measured evidence, in claims.json and on the page (issue 43); and
// report.md listing every claim.
func checkVerdictsExplained(t *testing.T, claims []claimVerdict, page, md []byte) {
	t.Helper()
	for _, c := range claims {
		switch c.Verdict {
		case "holds", "reported":
		case "contradicted", "inconclusive", "uninformative", "not-run":
			if c.Explanation == "" {
				t.Errorf("claim %s is %s and claims.json gives no explanation", c.ID, c.Verdict)
			} else if !bytes.Contains(page, []byte(html.EscapeString(c.Explanation))) {
				t.Errorf("claim %s: report.html lacks its explanation %q", c.ID, c.Explanation)
			}
		default:
			t.Errorf("claim %s: verdict %q", c.ID, c.Verdict)
		}
		if !bytes.Contains(md, []byte("| "+c.ID+" |")) {
			t.Errorf("report.md lacks claim %s", c.ID)
		}
	}
}

// chromiumRunner returns a function that runs headless chromium with
// args (and url unless the last argument is a file:// URL) and env added
// to the environment, and returns its standard output.
func chromiumRunner(t *testing.T, chromium, url string, env []string) func(...string) []byte {
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--host-resolver-rules=MAP * ~NOTFOUND", "--user-data-dir=" + t.TempDir()}
	return func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(chromium, append(base, args...)...)
		cmd.Env = append(os.Environ(), env...)
		if !strings.HasPrefix(args[len(args)-1], "file://") {
			cmd.Args = append(cmd.Args, url)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		done := make(chan struct{})
		var out []byte
		var err error
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
}

// checkScreenshotNotBlank: a screenshot of the page is not blank.
func checkScreenshotNotBlank(t *testing.T, run func(...string) []byte) {
	t.Helper()
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

// checkReportCommand: pipeline report rebuilds the report from the store
// (the same bytes, the verdicts on stdout), audit traces every number of
// it, and on a store that lacks figures it runs nothing and says what to do.
func checkReportCommand(t *testing.T, bin, root, dir string, common []string) {
	t.Helper()
	figDir := filepath.Join(dir, "fig")
	before, _ := os.ReadFile(filepath.Join(figDir, "report.html"))
	os.Remove(filepath.Join(figDir, "report.html"))
	out, code := cliStdout(t, bin, root, withFlags([]string{"report"}, common...)...)
	if after, _ := os.ReadFile(filepath.Join(figDir, "report.html")); code != 0 || !bytes.Equal(before, after) || !strings.Contains(out, "fig3a-crossover") {
		t.Fatalf("pipeline report: exit %d, same page %v\n%s", code, bytes.Equal(before, after), out)
	}
	// Its count line counts the verdicts it printed, by their names (it
	// printed "0 fails, 0 inconclusive" after the verdicts were renamed).
	counted := map[string]int{}
	claims := 0
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 4 && strings.HasPrefix(f[3], "§") {
			counted[strings.ReplaceAll(f[0], "-", " ")]++
			claims++
		}
	}
	want := fmt.Sprintf("%d holds, %d contradicted, %d inconclusive, %d uninformative, %d not run, %d reported\n", counted["holds"], counted["contradicted"], counted["inconclusive"], counted["uninformative"], counted["not run"], counted["reported"])
	if claims == 0 || !strings.Contains(out, want) {
		t.Errorf("pipeline report: %d claim lines; the count line should read %q:\n%s", claims, want, out)
	}
	// The smoke profile's horizons stop at 200: the claims about 500 and
	// 1000 are not run in it (they read "not shown at this scale" before).
	if !regexp.MustCompile(`(?m)^not-run +fig3d-swimmer-beyond `).MatchString(out) || !regexp.MustCompile(`(?m)^not-run +fig3d-halfcheetah-beyond `).MatchString(out) {
		t.Errorf("pipeline report: the claims beyond H = 200 are not said to be not run in the smoke profile:\n%s", out)
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
	checkInterimReport(t, bin, root, dir, partial)
}

// checkInterimReport: report --interim on a store that holds one figure
// (plot/fig3c-lqr) and the evaluations of another (the regret figure, not
// plotted) computes the claims of both, each exactly as the full report of
// the complete smoke store does (claims.json), lists every other claim as
// pending with its figure's recorded inputs, and writes nothing: not the
// store, not its log, not --figures.
func checkInterimReport(t *testing.T, bin, root, dir string, partial []string) {
	t.Helper()
	pipelineRun(t, bin, root, append([]string{"evaluate/olr"}, partial...)...)
	before := storeFiles(t, filepath.Join(dir, "partial"))
	out, code := cliStdout(t, bin, root, withFlags([]string{"report", "--interim", "--json"}, partial...)...)
	if code != exitOK {
		t.Fatalf("report --interim: exit %d\n%s", code, out)
	}
	var doc struct {
		Interim bool
		Figures []struct{ Task, Plotted, Pending string }
		Claims  []json.RawMessage
		Pending map[string]string
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("report --interim --json: %v\n%s", err, out)
	}
	plotted := map[string]string{}
	for _, f := range doc.Figures {
		plotted[f.Task] = f.Plotted + f.Pending
	}
	if plotted["plot/fig3c-lqr"] != "recorded" || plotted["plot/olr-regret"] != "here" || !strings.HasPrefix(plotted["plot/fig1-mnist"], "0 of its ") {
		t.Errorf("figures: %v", plotted)
	}
	var full struct{ Claims []json.RawMessage }
	data, err := os.ReadFile(filepath.Join(dir, "fig", "claims.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &full); err != nil {
		t.Fatal(err)
	}
	fullByID := map[string]string{}
	for _, c := range full.Claims {
		var id struct{ ID, Figure string }
		json.Unmarshal(c, &id)
		fullByID[id.ID] = compactJSON(t, c)
		if id.Figure != "fig3c-lqr" && id.Figure != "olr-regret" && !strings.Contains(doc.Pending[id.ID], "inputs recorded") {
			t.Errorf("claim %s of %s: pending %q, want its figure's inputs counted", id.ID, id.Figure, doc.Pending[id.ID])
		}
	}
	if len(doc.Claims)+len(doc.Pending) != len(full.Claims) || len(doc.Claims) == 0 {
		t.Errorf("%d claims computed and %d pending, the full report has %d", len(doc.Claims), len(doc.Pending), len(full.Claims))
	}
	for _, c := range doc.Claims {
		var id struct{ ID string }
		json.Unmarshal(c, &id)
		if got := compactJSON(t, c); got != fullByID[id.ID] {
			t.Errorf("claim %s: interim %s\nfull report %s", id.ID, got, fullByID[id.ID])
		}
	}
	if after := storeFiles(t, filepath.Join(dir, "partial")); !maps.Equal(after, before) {
		t.Error("report --interim changed the store")
	}
	if _, err := os.Stat(filepath.Join(dir, "partial-fig", "report.html")); err == nil {
		t.Error("report --interim wrote a page")
	}
	out, code = cliStdout(t, bin, root, withFlags([]string{"report", "--interim"}, partial...)...)
	if code != exitOK || !strings.Contains(out, "interim report (profile smoke): 2 of 7 figures can be made") ||
		!strings.Contains(out, "plot/olr-regret          plotted here from its recorded inputs") || !strings.Contains(out, " pending (their figures cannot be made yet)") {
		t.Errorf("report --interim: exit %d\n%s", code, out)
	}
}

// compactJSON is a JSON value without insignificant space.
func compactJSON(t *testing.T, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// checkSelfContained: nothing is fetched: no src, no href but in-page
// anchors, no url() in styles but the data: URL of the figures' font, no
// script.
func checkSelfContained(t *testing.T, page []byte) {
	t.Helper()
	for _, re := range []string{`(?i)\ssrc\s*=`, `(?i)\shref\s*=\s*"[^#]`, `(?i)<script`, `(?i)<link`, `(?i)@import`} {
		if m := regexp.MustCompile(re).Find(page); m != nil {
			t.Errorf("report.html refers outside itself: %q", m)
		}
	}
	// The one url() allowed: the figures' font, inside the page.
	for _, m := range regexp.MustCompile(`(?i)url\(\s*['"]?([^,)]*)`).FindAllSubmatch(page, -1) {
		if !bytes.HasPrefix(m[1], []byte("data:font/ttf;base64")) {
			t.Errorf("report.html refers outside itself: url(%s", m[1])
		}
	}
}

// measureFigures, appended to a copy of the report (the report itself has
// no script), writes into the DOM what a reader sees of each figure at
// the page's width: the figure's rendered width, every text with its
// rendered font size in CSS pixels (the SVG's font size times its scale
// on the page) and its box on the page.
const measureFigures = `<script>
const out = [];
for (const sec of document.querySelectorAll('section[id^="fig-"]')) {
  const svg = sec.querySelector('svg');
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const texts = [];
  for (const t of svg.querySelectorAll('text')) {
    if (t.textContent.trim() === '') continue;
    const r = t.getBoundingClientRect();
    texts.push({text: t.textContent, px: parseFloat(getComputedStyle(t).fontSize) * scale, l: r.left, t: r.top, r: r.right, b: r.bottom});
  }
  out.push({id: sec.id.slice(4), width: svg.getBoundingClientRect().width, texts: texts});
}
const pre = document.createElement('pre');
pre.id = 'measured';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>`

// measureClaims, appended to a copy of the report, writes into the DOM
// what a reader sees of the summary table: each claim row's id, its n,
// its verdict and where the verdict cell ends on the page.
const measureClaims = `<script>
const rows = [];
for (const tr of document.querySelectorAll('table#claims tr.claim')) {
  const cell = h => tr.querySelector('td[data-h="' + h + '"]');
  const v = cell('verdict').getBoundingClientRect();
  rows.push({id: tr.id.slice(6), n: cell('n').textContent, verdict: cell('verdict').textContent,
    right: v.right, width: v.width, pageWidth: document.documentElement.clientWidth});
}
const banner = document.getElementById('scale');
const pre = document.createElement('pre');
pre.id = 'measured';
pre.textContent = JSON.stringify({banner: banner ? banner.textContent : '', rows: rows});
document.body.appendChild(pre);
</script>`

// measureInChromium renders page with script added before </body> in a
// window of size ("W,H") and decodes into v the JSON the script leaves in
// <pre id="measured">.
func measureInChromium(t *testing.T, run func(...string) []byte, page []byte, script, size string, v any, args ...string) {
	t.Helper()
	i := bytes.LastIndex(page, []byte("</body>"))
	if i < 0 {
		t.Fatal("report.html has no </body>")
	}
	measured := append(append(append([]byte{}, page[:i]...), script...), page[i:]...)
	path := filepath.Join(t.TempDir(), "measure.html")
	if err := os.WriteFile(path, measured, 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(run(append(append([]string{"--window-size=" + size}, args...), "--dump-dom", "file://"+path)...))
	m := regexp.MustCompile(`(?s)<pre id="measured">(.*?)</pre>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatal("the measuring script left nothing in the DOM")
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), v); err != nil {
		t.Fatal(err)
	}
}

// checkScaleAndNarrowLayout checks what a reader must see first (issue
// 28): the banner naming the profile and that it is not the paper's scale,
// n on every claim row, and, on a 420-pixel-wide screen, every claim's
// verdict inside the page.
func checkScaleAndNarrowLayout(t *testing.T, page []byte, claims []claimVerdict, run func(...string) []byte) {
	t.Helper()
	var got struct {
		Banner string
		Rows   []struct {
			ID, N, Verdict          string
			Right, Width, PageWidth float64
		}
	}
	measureInChromium(t, run, page, measureClaims, "420,3000", &got)
	if !strings.Contains(got.Banner, "Profile smoke: NOT the paper's scale") {
		t.Errorf("the banner reads %q", got.Banner)
	}
	if len(got.Rows) != len(claims) {
		t.Errorf("%d claim rows measured, claims.json has %d", len(got.Rows), len(claims))
	}
	for _, r := range got.Rows {
		if r.N == "" {
			t.Errorf("claim %s: no n", r.ID)
		}
		if r.Width <= 0 || r.Right > r.PageWidth+0.5 {
			t.Errorf("claim %s at 420 px: its verdict %q ends at %.0f px of %.0f", r.ID, r.Verdict, r.Right, r.PageWidth)
		}
	}
}

// paperAxes are the axes of the paper's figures (spec §2.8, §3.9, §4.6,
// §5.5; the online-regret figure is log-log because Theorem 1's rates are
// its slopes): which are log-scaled, and the labels, with the unit where
// the quantity has one.
var paperAxes = map[string]struct {
	logX, logY     bool
	xLabel, yLabel string
}{
	"fig1-mnist":        {false, false, "Number of samples", "Test accuracy"},
	"fig2-linreg":       {true, false, "Number of samples", "Test squared loss"},
	"fig3a-swimmer":     {false, false, "Horizon H", "Mean Return"},
	"fig3b-halfcheetah": {false, false, "Horizon H", "Mean Return"},
	"fig3c-lqr":         {true, false, "Noise standard deviation c", "Number of samples (multiples of 10⁴)"},
	"olr-regret":        {true, true, "Rounds T", "Average regret"},
	// This project's horizon sweep beyond Fig. 3 (issue 31): Fig. 3's axes
	// with H on a log scale, since it spans 15 to 1000.
	"fig3d-horizon": {true, false, "Horizon H", "Mean Return"},
}

// checkFiguresForAReader checks the report's figures as a reader sees
// them in Chromium at 1024 pixels wide: the axes the paper drew (log
// scales where it used them, labels with units), each label on the page,
// and every text at least 10 px (superscript exponents 7 px) where the
// report shows it.
func checkFiguresForAReader(t *testing.T, root string, page []byte, run func(...string) []byte) {
	t.Helper()
	plan, err := dag.Load(filepath.Join(root, "dag.yaml"), "smoke", stages.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	for _, tk := range plan.Tasks {
		name, ok := strings.CutPrefix(tk.Path, "plot/")
		if !ok {
			continue
		}
		declared[name] = true
		want, ok := paperAxes[name]
		if !ok {
			t.Errorf("figure %s: not among the paper's figures this test knows", name)
			continue
		}
		param := func(key string) any { v, _ := tk.Params.Peek(key); return v }
		isTrue := func(key string) bool { b, _ := param(key).(bool); return b }
		if isTrue("log_x") != want.logX || isTrue("log_y") != want.logY {
			t.Errorf("figure %s: log_x %v, log_y %v; the paper's: %v, %v", name, param("log_x"), param("log_y"), want.logX, want.logY)
		}
		if param("x_label") != want.xLabel || param("y_label") != want.yLabel {
			t.Errorf("figure %s: axes %q, %q; the paper's: %q, %q", name, param("x_label"), param("y_label"), want.xLabel, want.yLabel)
		}
	}
	if len(declared) != len(paperAxes) {
		t.Errorf("the smoke plan draws %d figures, the paper %d", len(declared), len(paperAxes))
	}

	var figs []struct {
		ID    string
		Width float64
		Texts []pageText
	}
	measureInChromium(t, run, page, measureFigures, "1024,768", &figs)
	if len(figs) != len(paperAxes) {
		t.Errorf("measured %d figures, want %d", len(figs), len(paperAxes))
	}
	for _, f := range figs {
		want := paperAxes[f.ID]
		seen := map[string]bool{}
		smallest, smallestSup := math.Inf(1), math.Inf(1)
		for _, l := range joinSuperscripts(f.Texts) {
			seen[l.text] = true
			smallest, smallestSup = math.Min(smallest, l.px), math.Min(smallestSup, l.supPx)
		}
		for _, l := range []string{want.xLabel, want.yLabel} {
			if !seen[l] {
				t.Errorf("figure %s: the rendered page lacks the axis label %q", f.ID, l)
			}
		}
		t.Logf("figure %s: %.0f px wide, smallest text %.1f px, smallest exponent %.1f px", f.ID, f.Width, smallest, smallestSup)
		if smallest < 10 || smallestSup < 7 { // +Inf: no exponent
			t.Errorf("figure %s at 1024 px: smallest text %.1f px, exponent %.1f px (want at least 10 and 7)", f.ID, smallest, smallestSup)
		}
	}
}

// joinSuperscripts on texts as Chromium measured them in the smoke
// report's fig3a caption (2026-11-29): the ² starts 1.1 px after "2·10"
// ends, and is still its exponent; a small text 3 px after a line is not.
func TestJoinSuperscripts(t *testing.T) {
	texts := []pageText{
		{Text: "smoke profile, a test of the pipeline, not a result: H = 1, 3 and 15 only,", Px: 13.33, L: 25.61, T: 10161.69, R: 399.45, B: 10176.69},
		{Text: "2·10", Px: 13.33, L: 25.61, T: 10175.02, R: 48.93, B: 10190.02},
		{Text: "2", Px: 9.33, L: 50.04, T: 10173.42, R: 54.72, B: 10183.42},
		{Text: "·H environment steps, 2 seeds", Px: 13.33, L: 54.71, T: 10175.02, R: 350.46, B: 10190.02},
		{Text: "a", Px: 9.33, L: 353.46, T: 10173.42, R: 358, B: 10183.42},
	}
	got := joinSuperscripts(texts)
	if len(got) != 3 {
		t.Fatalf("joined into %d lines, want 3: %+v", len(got), got)
	}
	if l := got[1]; l.text != "2·10²·H environment steps, 2 seeds" || l.px != 13.33 || l.supPx != 9.33 {
		t.Errorf("second line %+v, want the caption's 2·10²·H with its exponent at 9.33 px", l)
	}
	if l := got[2]; l.text != "a" || l.px != 9.33 || !math.IsInf(l.supPx, 1) {
		t.Errorf("a small text 3 px after a line joined it: %+v", l)
	}
}
