package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image/png"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"zorepro/pipeline/events"
	"zorepro/pipeline/task"
	"zorepro/stages/audit"
)

// startServing starts the binary with args (a command that serves: serve,
// or run --serve, at 127.0.0.1:0) and returns its base URL, once it says
// where it listens, and a channel closed when it exits. The process is
// killed at the end of the test.
func startServing(t *testing.T, bin, dir string, args ...string) (base string, exited chan struct{}) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited = make(chan struct{})
	urls := make(chan string, 1)
	var log strings.Builder
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		re := regexp.MustCompile(`serving (http://\S+)/`)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		cmd.Wait()
	}()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	select {
	case base = <-urls:
	case <-exited:
		t.Fatalf("%v exited without serving:\n%s", args, log.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("%v did not start serving", args)
	}
	return base, exited
}

// browser returns a chromedp context on Debian's headless Chromium, or
// skips the test where it is not installed.
func browser(t *testing.T) context.Context {
	t.Helper()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium; .ci/run installs it)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.Flag("disable-background-networking", true), chromedp.UserDataDir(t.TempDir()))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	ctx, cancel3 := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancel3)
	return ctx
}

// In a real browser: the figure page of fig3a draws every plotted point as
// a link; clicking one opens its audit trail, whose seeds and values are
// those `pipeline audit --x ... --json` gives for that point, and from it
// a seed's evaluate task opens with its learning curve.
func TestServeClickPointToItsSamples(t *testing.T) {
	t.Parallel() // no clock in its checks; see tests.md
	bin, root, _, common := smokeStore(t)
	ctx := browser(t)
	base, _ := startServing(t, bin, root, append([]string{"serve", "--addr", "127.0.0.1:0", "--allow-reexecute"}, withoutFigures(common)...)...)

	// The figures page shows each PNG (drawn at plot.PNGDPI) at its SVG's
	// size, half its pixels, or narrower where the page is: a one-panel
	// figure at twice its size drew its text twice as large as the rest.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/figures")); err != nil {
		t.Fatal(err)
	}
	imgs, err := chromedp.Run(ctx, chromedp.Evaluate[[]struct {
		Src     string
		W, Room float64
	}](`Promise.all([...document.querySelectorAll('img.figure')].map(i => i.decode().then(() => ({Src: i.currentSrc, W: i.width, Room: (b => b.clientWidth - parseFloat(getComputedStyle(b).paddingLeft) - parseFloat(getComputedStyle(b).paddingRight))(i.parentElement.closest('main, body'))}))))`, chromedp.EvalAwaitPromise))
	if err != nil || len(imgs) < 7 {
		t.Fatalf("the figures page's images: %v, %v", imgs, err)
	}
	for _, im := range imgs {
		resp, err := http.Get(im.Src)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: %v", im.Src, err)
		}
		if want := min(float64(cfg.Width)/2, im.Room); math.Abs(im.W-want) > 1 {
			t.Errorf("%s is %v px wide on the page, want %v (half of its %d pixels, at most the page's %v)", im.Src, im.W, want, cfg.Width, im.Room)
		}
	}

	sel := chromedp.CSS(`div.panel a.pt[href*="curve=arsv1"]`)
	err = chromedp.Do(ctx, chromedp.Navigate(base+"/figure/fig3a-swimmer"), chromedp.WaitVisible(sel))
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	attr, err := chromedp.Run(ctx, chromedp.AttributeValue(sel, "href"))
	if err != nil {
		t.Fatal(err)
	}
	href := attr.Value
	if err := chromedp.Do(ctx, chromedp.Click(sel), chromedp.WaitVisible(chromedp.CSS(`#seeds`))); err != nil {
		t.Fatalf("click %s: %v", href, err)
	}
	title, _ := chromedp.Run(ctx, chromedp.Title())
	// The point the click landed on (circles of two curves may overlap):
	// the page's own address says which.
	loc, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.search`))
	if err != nil {
		t.Fatal(err)
	}
	seeds, err := chromedp.Run(ctx, chromedp.Evaluate[[]struct{ Seed, Y string }](`[...document.querySelectorAll('#seeds tr.seed')].map(r => ({Seed: r.querySelector('.seed-id').textContent, Y: r.querySelector('.seed-y').textContent}))`))
	if err != nil {
		t.Fatal(err)
	}
	q, err := url.ParseQuery(strings.TrimPrefix(loc, "?"))
	if err != nil || q.Get("x") == "" || q.Get("curve") == "" || !strings.Contains(title, "fig3a-swimmer") {
		t.Fatalf("clicked %q, landed on %q (%q)", href, loc, title)
	}
	out, code := cliStdout(t, bin, root, append([]string{"audit", "fig3a-swimmer.svg", "--curve", q.Get("curve"), "--x", q.Get("x"), "--json"}, common...)...)
	if code != 0 {
		t.Fatalf("audit: exit %d\n%s", code, out)
	}
	var rep audit.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Points) != 1 {
		t.Fatalf("audit --json: %v (%d points)", err, len(rep.Points))
	}
	want := rep.Points[0].Seeds
	if len(seeds) != len(want) || len(want) == 0 {
		t.Fatalf("the page lists %d seeds, audit %d", len(seeds), len(want))
	}
	for i, s := range want {
		if seeds[i].Seed != strconv.FormatUint(s.Seed, 10) || seeds[i].Y != task.FormatFloat(s.Y) {
			t.Errorf("seed %d: the page shows %+v, audit seed %d y %s", i, seeds[i], s.Seed, task.FormatFloat(s.Y))
		}
	}

	// The re-execute button re-executes the point's tasks and finds them
	// reproduced.
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#reexecute`)), chromedp.WaitVisible(chromedp.CSS(`#reexec-verdict`)))
	verdict, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#reexec-verdict`)))
	rows, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#reexec tr').length - 1`))
	if err != nil || verdict != "reproduced" || rows < 2*len(want)+1 {
		t.Errorf("re-execute: %q over %d tasks, %v", verdict, rows, err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/point"+loc), chromedp.WaitVisible(chromedp.CSS(`#seeds`))); err != nil {
		t.Fatal(err)
	}

	// On to the first seed's evaluate task: its curve is drawn.
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#seeds tr.seed a[href^="/task/evaluate/"]`)), chromedp.WaitVisible(chromedp.CSS(`#state`)))
	state, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#state`)))
	charts, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('svg.chart polyline').length`))
	if err != nil || state != "done" || charts == 0 {
		t.Errorf("evaluate task page: state %q, %d curves drawn, %v", state, charts, err)
	}
}

// A run with --serve serves the overview from its own process while it
// runs: a browser loading it again and again (as its one-second meta
// refresh does) sees the count of done tasks grow.
func TestServeLiveRunOverview(t *testing.T) {
	bin, root := binary(t), repoRoot(t)
	dir := t.TempDir()
	ctx := browser(t)
	base, exited := startServing(t, bin, root, append([]string{"run", "--serve", "127.0.0.1:0", "--jobs", "2"}, smokeFlags(root, dir)...)...)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(\d+) of (\d+) tasks done`)
	var seen []int
	total := 0
	var lastErr error
	pagesChecked := false
	for done := false; !done; {
		select {
		case <-exited:
			done = true
		case <-time.After(300 * time.Millisecond):
		}
		// Load it again as its meta refresh does, and read it.
		tctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		err := chromedp.Do(tctx, chromedp.Navigate(base+"/"))
		var summary, refresh string
		if err == nil {
			summary, err = chromedp.Run(tctx, chromedp.Evaluate[string](`(document.querySelector('#summary') || {}).textContent || ''`))
			refresh, _ = chromedp.Run(tctx, chromedp.Evaluate[string](`(document.querySelector('meta[http-equiv=refresh]') || {}).content || ''`))
		}
		cancel()
		if err != nil {
			lastErr = err
			continue
		}
		if m := re.FindStringSubmatch(summary); m != nil {
			n, _ := strconv.Atoi(m[1])
			total, _ = strconv.Atoi(m[2])
			if len(seen) == 0 || seen[len(seen)-1] != n {
				seen = append(seen, n)
			}
			if n < total && refresh != "1" {
				t.Errorf("the overview of a run in progress (%d of %d done) does not reload itself every second: refresh %q", n, total, refresh)
			}
			if n > 0 && n < total && !pagesChecked {
				// The pages that compute identities or the interim report
				// beside the running engine answer while it writes.
				pagesChecked = true
				for _, p := range []string{"/claims", "/runs", "/figures", "/overview.json"} {
					resp, err := http.Get(base + p)
					if err != nil {
						t.Fatal(err)
					}
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						t.Errorf("%s during the run (%d of %d done): %s\n%s", p, n, total, resp.Status, body)
					}
				}
			}
		}
	}
	if !pagesChecked {
		t.Errorf("the run never showed a partial count: the other pages were not asked for during it (%v)", seen)
	}
	if len(seen) < 2 {
		t.Fatalf("the overview's done count never moved while the run ran: %v (of %d; last error %v)", seen, total, lastErr)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] < seen[i-1] {
			t.Errorf("the done count went back: %v", seen)
		}
	}
	out, code := cliStdout(t, bin, root, append([]string{"status", "--json"}, withoutFigures(smokeFlags(root, dir))...)...)
	var st statusDoc
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Counts["done"] != st.Total || st.Total != total {
		t.Errorf("after the run: status %v (exit %d), the page counted %d tasks", st.Counts, code, total)
	}
}

// `serve` on a store a run holds reads the run's snapshot and moves on
// with each newer one, then to the store itself once the run has ended,
// without keeping the store's lock: a later run starts while it serves.
func TestServeFollowsARunningRun(t *testing.T) {
	bin, root := binary(t), repoRoot(t)
	dir := t.TempDir()
	flags := smokeFlags(root, dir)
	run := exec.Command(bin, append([]string{"run", "--jobs", "2", "--snapshot-interval", "1s"}, flags...)...)
	run.Dir = root
	var runOut bytes.Buffer
	run.Stdout, run.Stderr = &runOut, &runOut
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- run.Wait() }()
	t.Cleanup(func() { run.Process.Kill() })
	snap := filepath.Join(dir, "store", "events.db.snapshot")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(snap); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run took no snapshot within a minute:\n%s", runOut.String())
		}
	}
	base, _ := startServing(t, bin, root, append([]string{"serve", "--addr", "127.0.0.1:0"}, withoutFigures(flags)...)...)
	overview := func() (ov struct {
		Tasks, Done int
		InProgress  bool      `json:"in_progress"`
		AsOf        time.Time `json:"as_of"`
		Running     []struct {
			Task string
			For  time.Duration
		}
	}, err error) {
		resp, err := http.Get(base + "/overview.json")
		if err != nil {
			return ov, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return ov, fmt.Errorf("overview.json: %s", resp.Status)
		}
		return ov, json.NewDecoder(resp.Body).Decode(&ov)
	}
	var seen []int
	var runErr error
	for running := true; running; {
		select {
		case runErr = <-ran:
			running = false
		case <-time.After(200 * time.Millisecond):
		}
		ov, err := overview()
		if err != nil {
			t.Fatal(err)
		}
		// The run's snapshot is as of when it was written, and its
		// running tasks have run for a time up to then.
		if ov.InProgress && (ov.AsOf.IsZero() || time.Since(ov.AsOf) < 0 || time.Since(ov.AsOf) > time.Minute) {
			t.Errorf("the overview of a running run's snapshot is as of %v", ov.AsOf)
		}
		for _, r := range ov.Running {
			if r.For < 0 {
				t.Errorf("%s has run for %v", r.Task, r.For)
			}
		}
		if len(seen) == 0 || seen[len(seen)-1] != ov.Done {
			seen = append(seen, ov.Done)
		}
	}
	if runErr != nil {
		t.Fatalf("the run: %v\n%s", runErr, runOut.String())
	}
	if len(seen) < 3 {
		t.Errorf("serve's done count while the run ran: %v; want it to move with the run's snapshots", seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] < seen[i-1] {
			t.Errorf("the done count went back: %v", seen)
		}
	}
	// The run has ended and removed its snapshot: serve reads the store.
	var last error
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		ov, err := overview()
		if err == nil && !ov.InProgress && ov.Done == ov.Tasks && ov.Tasks > 0 && ov.AsOf.IsZero() {
			break
		}
		last = fmt.Errorf("%+v, %v", ov, err)
		if time.Now().After(deadline) {
			t.Fatalf("20 s after the run ended, serve shows %v; want every task done and no run in progress", last)
		}
	}
	// Serving it holds no lock a run needs.
	res, _ := pipelineRun(t, bin, root, append([]string{"--jobs", "2"}, flags...)...)
	if len(res.Executed) != 0 || len(res.Failed) != 0 || len(res.Cached) == 0 {
		t.Errorf("a second run while serve follows the store: executed %d, failed %v, cached %d", len(res.Executed), res.Failed, len(res.Cached))
	}
}

// A store at rest whose last run recorded its start and nothing after
// (a run killed with SIGKILL, or by the end of a session) is not shown
// as in progress: the overview says the run was killed and that the same
// command resumes it, and the runs page says "killed".
func TestServeKilledRunIsNotInProgress(t *testing.T) {
	t.Parallel() // waits on HTTP only
	bin, root, dir, common := smokeStore(t)
	log, err := events.Open(filepath.Join(dir, "store", "events.db"), events.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	killed, err := log.BeginRun(json.RawMessage(`{"profile":"smoke","args":["run","--profile","smoke","--force"]}`), time.Now().UnixNano())
	if err != nil {
		t.Fatal(err)
	}
	// It had started one task again when it was killed.
	const task = "plot/fig2-linreg"
	w := log.NewWriter(events.WriterOptions{})
	w.Append(events.Event{Type: events.TypeState, Run: killed, Task: task, State: events.StateStarted, Time: time.Now().UnixNano()})
	if err, cerr := w.Close(), log.Close(); err != nil || cerr != nil {
		t.Fatalf("record a run's start: %v, %v", err, cerr)
	}
	base, _ := startServing(t, bin, root, append([]string{"serve", "--addr", "127.0.0.1:0"}, withoutFigures(common)...)...)
	get := func(path string) string {
		t.Helper()
		code, body := httpGet(t, base+path)
		if code != http.StatusOK {
			t.Fatalf("%s: %d\n%s", path, code, body)
		}
		return body
	}
	var ov struct {
		Run        uint64
		InProgress bool `json:"in_progress"`
		Killed     bool
		Running    []struct{ Task string }
	}
	if err := json.Unmarshal([]byte(get("/overview.json")), &ov); err != nil {
		t.Fatal(err)
	}
	if ov.Run != killed || ov.InProgress || !ov.Killed || len(ov.Running) != 0 {
		t.Errorf("overview of a store whose run %d was killed: %+v; want not in progress, killed", killed, ov)
	}
	if page := html.UnescapeString(get("/")); !strings.Contains(page, fmt.Sprintf("latest run %d ended without recording its end: it was killed", killed)) {
		t.Errorf("the overview page does not say run %d was killed:\n%s", killed, page)
	}
	if runs := get("/runs"); !strings.Contains(runs, "<td>killed (no end recorded)</td>") || strings.Contains(runs, "<td>running</td>") {
		t.Errorf("the runs page of a killed run:\n%s", runs)
	}
	if page := get("/task/" + task); strings.Contains(page, "Running: this page reloads") || !strings.Contains(page, "started") {
		t.Errorf("the page of %s, which the killed run had started, shows it running or not started:\n%s", task, page)
	}
	// status says it too.
	st := withoutFigures(common)
	if out, code := cliStdout(t, bin, root, append([]string{"status"}, st...)...); code != 0 || !strings.Contains(out, fmt.Sprintf("run %d recorded its start and no end, and no run holds the store: it was killed", killed)) {
		t.Errorf("status of the killed run's store: exit %d\n%s", code, out)
	}
	var doc statusDoc
	if out, code := cliStdout(t, bin, root, append([]string{"status", "--json"}, st...)...); code != 0 || json.Unmarshal([]byte(out), &doc) != nil || doc.KilledRun != killed {
		t.Errorf("status --json of the killed run's store: exit %d, killed_run %d\n%s", code, doc.KilledRun, out)
	}
}

// The server binds only to loopback unless a token guards it, asks for
// that token on every request (constant-time compared; given once in the
// query, then a cookie), serves nothing outside the recorded figures and
// pages, answers every response with a Content-Security-Policy, and is
// read-only.
func TestServeRefusesAndConfines(t *testing.T) {
	t.Parallel() // no clock in its checks; see tests.md
	bin, root, _, common := smokeStore(t)
	out, code := cli(t, bin, root, append([]string{"serve", "--addr", "0.0.0.0:0"}, withoutFigures(common)...)...)
	if code != exitInvalid || !strings.Contains(out, "--token") {
		t.Errorf("a non-loopback bind without a token: exit %d\n%s", code, out)
	}
	const token = "s3cret-token"
	base, _ := startServing(t, bin, root, append([]string{"serve", "--addr", "127.0.0.1:0", "--token", token}, withoutFigures(common)...)...)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(method, path string, hdr map[string]string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("%s %s: Content-Security-Policy %q", method, path, csp)
		}
		return resp, string(b)
	}
	bearer := map[string]string{"Authorization": "Bearer " + token}
	if r, _ := get("GET", "/", nil); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %d", r.StatusCode)
	}
	if r, _ := get("GET", "/", map[string]string{"Authorization": "Bearer s3cret-tokex"}); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d", r.StatusCode)
	}
	r, _ := get("GET", "/?token="+token, nil)
	var cookie string
	for _, c := range r.Cookies() {
		if c.Name == "pipeline_token" && c.HttpOnly {
			cookie = c.Name + "=" + c.Value
		}
	}
	if r.StatusCode != http.StatusSeeOther || cookie == "" || strings.Contains(r.Header.Get("Location"), token) {
		t.Errorf("the token in the query: %d, cookie %q, location %q", r.StatusCode, cookie, r.Header.Get("Location"))
	}
	if r, body := get("GET", "/", map[string]string{"Cookie": cookie}); r.StatusCode != http.StatusOK || !strings.Contains(body, "tasks done") {
		t.Errorf("with the cookie: %d", r.StatusCode)
	}
	if r, body := get("GET", "/figure-file/fig3a-swimmer.png", bearer); r.StatusCode != http.StatusOK || !strings.HasPrefix(body, "\x89PNG") {
		t.Errorf("a recorded figure file: %d", r.StatusCode)
	}
	for _, p := range []string{"/figure-file/..%2Fevents.db", "/figure-file/events.db", "/task/../../events.db", "/static/..%2f..%2fevents.db",
		"/figure-file/%2e%2e%2f%2e%2e%2fevents.db", "/events.db", "/figure/..%2F..%2Fevents.db", "/task/%2e%2e/%2e%2e/events.db"} {
		r, body := get("GET", p, bearer)
		if r.StatusCode == http.StatusOK || strings.Contains(body, "\xed\xda\x0c\xed") {
			t.Errorf("GET %s: %d, %d bytes", p, r.StatusCode, len(body))
		}
	}
	if r, _ := get("POST", "/", bearer); r.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", r.StatusCode)
	}
	// Re-execution is off unless --allow-reexecute, and then only asked
	// for from the server's own pages.
	rbase, _ := startServing(t, bin, root, append([]string{"serve", "--addr", "127.0.0.1:0", "--allow-reexecute"}, withoutFigures(common)...)...)
	for _, h := range []map[string]string{{"Sec-Fetch-Site": "cross-site"}, {"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "same-site"}} {
		req, _ := http.NewRequest("POST", rbase+"/reexecute", strings.NewReader("figure=fig3a-swimmer&curve=arsv1&x=1"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("a re-execution asked for by another site (%v): %d", h, resp.StatusCode)
		}
	}
	if r, _ := get("POST", "/reexecute", bearer); r.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /reexecute without --allow-reexecute: %d", r.StatusCode)
	}
	if r, body := get("GET", "/task/no/such/task", bearer); r.StatusCode != http.StatusNotFound || strings.Contains(body, "<nav>") {
		t.Errorf("an unknown task: %d\n%s", r.StatusCode, body)
	}
	// A browser asking for a page that is not there gets the error as a
	// page, with the navigation back; a file or JSON stays a bare line.
	page := map[string]string{"Accept": "text/html,application/xhtml+xml"}
	for k, v := range bearer {
		page[k] = v
	}
	if r, body := get("GET", "/task/no/such/task", page); r.StatusCode != http.StatusNotFound || !strings.Contains(body, `<nav><a href="/">Overview</a>`) ||
		!strings.Contains(body, "no/such/task is no task of profile smoke") {
		t.Errorf("an unknown task's page in a browser: %d\n%s", r.StatusCode, body)
	}
	if r, body := get("GET", "/figure-file/no-such.png", page); r.StatusCode != http.StatusNotFound || strings.Contains(body, "<nav>") {
		t.Errorf("an unknown figure file in a browser: %d\n%s", r.StatusCode, body)
	}
}

// withoutFigures drops --figures from a command's flags (serve has none).
func withoutFigures(flags []string) []string {
	var out []string
	for i := 0; i < len(flags); i++ {
		if flags[i] == "--figures" {
			i++
			continue
		}
		out = append(out, flags[i])
	}
	return out
}

// Two runs side by side: after a run that changes one figure's caption,
// the comparison names the plot task and the report as rerun, the caption
// line of the plot's identity as why, the plot's changed files, and no
// verdict changed.
func TestServeComparesTwoRuns(t *testing.T) {
	t.Parallel() // no clock in its checks; see tests.md
	bin, root, dir, common := smokeStore(t)
	text, err := os.ReadFile(filepath.Join(root, "dag.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const old = `params: {x_max: 20000, panels: ["10"], caption: "smoke profile, a test of the pipeline,`
	if !strings.Contains(string(text), old) {
		t.Fatal("dag.yaml's smoke fig2 caption moved: update the test")
	}
	changed := filepath.Join(dir, "dag.yaml")
	os.WriteFile(changed, []byte(strings.Replace(string(text), old, strings.Replace(old, "a test of", "(changed) a test of", 1), 1)), 0o644)
	flags := withoutFigures(common)
	flags[1] = changed // --dag
	if out, code := cli(t, bin, root, append(append([]string{"run"}, flags...), "--figures", filepath.Join(dir, "fig2"))...); code != 0 {
		t.Fatalf("the second run: exit %d\n%s", code, out)
	}
	base, _ := startServing(t, bin, root, append([]string{"serve", "--addr", "127.0.0.1:0"}, flags...)...)
	resp, err := http.Get(base + "/compare?a=1&b=2")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := html.UnescapeString(string(b))
	reran := regexp.MustCompile(`(?s)<table id="reran">(.*?)</table>`).FindStringSubmatch(page)
	if resp.StatusCode != 200 || reran == nil {
		t.Fatalf("compare: %d\n%s", resp.StatusCode, page)
	}
	for _, want := range []string{">plot/fig2-linreg<", ">report<", `+ param caption "smoke profile, (changed) a test of`, `- param caption "smoke profile, a test of`} {
		if !strings.Contains(reran[1], want) {
			t.Errorf("the reran tasks lack %q:\n%s", want, reran[1])
		}
	}
	if n := strings.Count(reran[1], "<tr>") - 1; n != 2 {
		t.Errorf("%d tasks listed as rerun, want the plot and the report", n)
	}
	figs := regexp.MustCompile(`(?s)<table id="figures">(.*?)</table>`).FindStringSubmatch(page)
	if figs == nil || !strings.Contains(figs[1], "fig2-linreg.svg") || strings.Contains(figs[1], "fig3a") {
		t.Errorf("changed figures: %v", figs)
	}
	if !strings.Contains(page, `<p id="verdicts">None.</p>`) {
		t.Error("a caption change changed verdicts")
	}
}

// The claims page on a store that holds one figure's inputs and nothing
// else: that figure is plotted from them and drawn, its claims are
// decided, each finding linked to its points, and the others wait, each
// saying for what.
func TestServeClaimsAsFiguresFillIn(t *testing.T) {
	t.Parallel() // no clock in its checks; see tests.md
	bin, root := binary(t), repoRoot(t)
	dir := t.TempDir()
	if out, code := cli(t, bin, root, append(append([]string{"run"}, smokeFlags(root, dir)...), "evaluate/olr")...); code != 0 {
		t.Fatalf("run evaluate/olr: exit %d\n%s", code, out)
	}
	base, _ := startServing(t, bin, root, append([]string{"serve", "--addr", "127.0.0.1:0"}, withoutFigures(smokeFlags(root, dir))...)...)
	get := func(path string) (int, string) {
		t.Helper()
		return httpGet(t, base+path)
	}
	code, page := get("/claims")
	if code != 200 {
		t.Fatalf("/claims: %d\n%s", code, page)
	}
	page = html.UnescapeString(page)
	if !strings.Contains(page, `srcset="/interim-file/olr-regret.png 2x"`) || !strings.Contains(page, "plotted here from its recorded inputs") {
		t.Error("the claims page does not draw olr-regret, plotted from its recorded inputs")
	}
	if code, png := get("/interim-file/olr-regret.png"); code != 200 || !strings.HasPrefix(png, "\x89PNG") {
		t.Errorf("the interim olr-regret.png: %d", code)
	}
	if !strings.Contains(page, `data-claim="olr-alg1-bound"`) || strings.Contains(page, `data-claim="fig1-order"`) {
		t.Error("the olr claims are not decided, or a claim without its figure is")
	}
	pending := regexp.MustCompile(`(?s)<table id="pending">(.*?)</table>`).FindStringSubmatch(page)
	if pending == nil || !strings.Contains(pending[1], "fig1-order") || !strings.Contains(pending[1], "plot/fig1-mnist: 0 of its") {
		t.Errorf("the waiting claims: %v", pending)
	}
}

// httpGet gets url and returns its status code and body.
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

// The overview's prediction and the claims page share one dry run when
// they ask within 15 s of each other (each is ~2 s of CPU on the paper
// store): the claims page is computed at the prediction's time. The
// overview gives each stage's task time left from it. Not parallel: the
// sharing window is a clock.
func TestServeSharesOneDryRun(t *testing.T) {
	bin, root, _, common := smokeStore(t)
	// The quick profile on a smoke store: most of its tasks are left,
	// timed by its reference runs.
	args := append([]string{"serve", "--addr", "127.0.0.1:0"}, withoutFigures(common)...)
	for i := range args {
		if i > 0 && args[i-1] == "--profile" {
			args[i] = "quick"
		}
	}
	base, _ := startServing(t, bin, root, args...)
	var ov struct {
		Remaining time.Duration `json:"remaining"`
		Predicted time.Time     `json:"predicted"`
		Done      int           `json:"done"`
		Stages    []struct {
			Stage     string        `json:"stage"`
			Tasks     int           `json:"tasks"`
			Done      int           `json:"done"`
			Left      time.Duration `json:"left"`
			LeftTasks int           `json:"left_tasks"`
			LeftTimed int           `json:"left_timed"`
		} `json:"stages"`
	}
	for deadline := time.Now().Add(60 * time.Second); ov.Predicted.IsZero(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the overview made no prediction in 60 s")
		}
		code, body := httpGet(t, base+"/overview.json")
		if code != http.StatusOK || json.Unmarshal([]byte(body), &ov) != nil {
			t.Fatalf("/overview.json: %d\n%.500s", code, body)
		}
	}
	// A second later, so that a dry run of its own would show another
	// time.
	time.Sleep(1100 * time.Millisecond)
	code, page := httpGet(t, base+"/claims")
	if code != http.StatusOK {
		t.Fatalf("/claims: %d\n%.500s", code, page)
	}
	at := regexp.MustCompile(`Computed at (\d\d:\d\d:\d\d)`).FindStringSubmatch(page)
	if at == nil || at[1] != ov.Predicted.Local().Format("15:04:05") {
		t.Errorf("the claims page was computed at %q, the prediction's dry run at %s: not shared", at, ov.Predicted.Local().Format("15:04:05"))
	}
	timed := 0
	for _, st := range ov.Stages {
		if st.LeftTasks > 0 && st.LeftTimed == st.LeftTasks && st.Left > 0 {
			timed++
		}
	}
	if ov.Remaining <= 0 || timed == 0 {
		t.Errorf("the overview of quick on a smoke store: remaining %v, %d stages with a time left: %+v", ov.Remaining, timed, ov.Stages)
	}
	// The smoke run's states are of quick's task paths (report, every
	// plot, ...), but of smoke's tasks: once the dry run says which quick
	// would run, none of those counts as done for quick, and every task is
	// either done for quick or left (the store is at rest).
	done := 0
	for _, st := range ov.Stages {
		done += st.Done
		if st.Done+st.LeftTasks != st.Tasks {
			t.Errorf("quick's stage %s on a smoke store: %d done and %d left of %d tasks", st.Stage, st.Done, st.LeftTasks, st.Tasks)
		}
	}
	if done != ov.Done {
		t.Errorf("the overview says %d done, its stages %d", ov.Done, done)
	}
}

// A task's page shows its short text outputs whole (a tuning selection's
// chosen.json and table.csv, a trial's score), each the bytes `pipeline
// show` prints.
func TestServeShowsShortOutputs(t *testing.T) {
	t.Parallel() // waits on HTTP only
	bin, root, _, common := smokeStore(t)
	st := withoutFigures(common)
	base, _ := startServing(t, bin, root, append([]string{"serve", "--addr", "127.0.0.1:0"}, st...)...)
	const task = "tune/linreg/d=10/method=ars"
	code, page := httpGet(t, base+"/task/"+task)
	if code != http.StatusOK {
		t.Fatalf("/task/%s: %d\n%.500s", task, code, page)
	}
	for _, file := range []string{"chosen.json", "table.csv"} {
		want, code := cliStdout(t, bin, root, append([]string{"show", task, file}, st...)...)
		if code != 0 || want == "" {
			t.Fatalf("show %s %s: exit %d", task, file, code)
		}
		if !strings.Contains(page, "<pre>"+html.EscapeString(want)+"</pre>") {
			t.Errorf("the page of %s does not show %s whole:\n%s\nin\n%.3000s", task, file, want, page)
		}
	}
}
