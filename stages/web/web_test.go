package web

import (
	"html/template"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"zorepro/pipeline"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/events"
	"zorepro/pipeline/provenance"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/stages"
	"zorepro/stages/audit"
	"zorepro/stages/interim"
	"zorepro/stages/report"
	"zorepro/stages/tune/chosenjson"
)

// Every page's template renders the values its page function gives it,
// with every optional part present (a running task with a budget, a
// failure, NaN bounds, a resumed attempt, a changed identity): a template
// that does not fit its data fails here, not in front of a reader.
func TestTemplatesRenderEveryPart(t *testing.T) {
	nan := math.NaN()
	seed := uint64(5488)
	yes := true
	ti := &audit.TaskInfo{Task: "train/x/seed=5488", Action: "xxh64-a", Output: "xxh64-b", Run: 2, Seed: &seed, Platform: []string{"go go1"}}
	chosen, err := chosenjson.Parse([]byte(`{"params": {"alpha": 0.02}, "point": 1, "score": 2.5, "seeds": [283]}`))
	if err != nil {
		t.Fatal(err)
	}
	fig := &figure{Name: "fig", Task: "plot/fig", Output: "xxh64-c", Run: 2, Files: []pipeline.OutputEntry{{Name: "fig.png"}}, Images: []string{"fig.png"}}
	pt := &audit.Point{Panel: "10", Curve: "ars", X: 300000, Plotted: audit.Aggregate{Mean: 1, Lo: nan, Hi: math.Inf(1), N: 2}, Equal: false, Problems: []string{"seed 1 differs"},
		Seeds: []audit.SeedTrace{{Seed: 5488, Y: 1.5, Evaluate: ti, Event: &task.Iter{Iteration: 3, Samples: 300}, Train: ti, TrainEvent: &task.Iter{Iteration: 3}, Snapshot: &yes,
			Tune: &audit.TuneInfo{TaskInfo: ti, Chosen: chosen}, Data: ti}}}
	cl := report.ClaimResult{ID: "c1", Figure: "fig", Verdict: "holds", Explanation: "why", Findings: []report.Finding{{Label: "ars", Value: 1, Lo: nan, Hi: 2, AtLeast: true}}}
	views := map[string]any{
		"overview.html": &Overview{Tasks: 3, Done: 1, InProgress: true, Elapsed: time.Minute, AsOf: time.Date(2026, 11, 29, 12, 34, 56, 0, time.UTC), Remaining: time.Hour, Workers: 4, Predicted: time.Now(), RunPredicted: 2 * time.Hour,
			Stages:   []StageCounts{{Stage: "train/x", Tasks: 3, Done: 1, Running: 1, Failed: 1, Left: 2*time.Hour + 5*time.Minute + 31*time.Second, LeftTasks: 2, LeftTimed: 1}},
			Running:  []Running{{Task: "train/x/seed=1", Iteration: 10, Samples: 1000, Budget: 1e5, Reported: true}, {Task: "train/x/seed=2", For: 90 * time.Second}, {Task: "tune/x/seed=3", Budget: 1e5, For: 72 * time.Second, Predicted: 150 * time.Second}},
			Failures: []Failure{{Task: "train/x/seed=3", Run: 2, Error: "boom"}}},
		"task.html": &taskView{Path: "train/x/seed=1", Stage: "train/x", Kind: "train", Seed: "1", Params: []string{"alpha 0.1"},
			State: &events.StateRecord{State: "done", Run: 2, Output: "xxh64-b", Action: "xxh64-a", Error: "e"}, Running: true,
			Transcript: []string{"kind train"}, Why: []string{"- param alpha 0.2", "+ param alpha 0.1"}, PreviousRun: 1,
			Planned: []plannedInput{{"data", "generate/x", "xxh64-d"}}, Outputs: []outputRow{{OutputEntry: pipeline.OutputEntry{Name: "trajectory", Size: 10}}, {OutputEntry: pipeline.OutputEntry{Name: "score.json", Size: 14}, Text: `{"score": <1>}`}},
			Segments: []provenance.Segment{{Run: 1}, {Run: 2, Resumed: true, ResumedAt: 40}}, Streams: &provenance.Streams{Derivation: "pcg", Families: []stream.Family{{Name: "batch", Arity: 1}}},
			Events: []eventRow{{Seq: 1, Type: "state", State: "done", Detail: "output x"}}, EventsCut: 3,
			Charts: []template.HTML{chart{Title: "loss", Series: []series{{Name: "loss", Points: []point{{X: 1, Y: 2}, {X: 2, Y: 1}}}}}.svg()}, Iterations: 2, Downsampled: true},
		"figures.html": []figure{*fig},
		"figure.html":  &figureView{figure: fig, Points: 1, Panels: []panelView{{Key: "10", Chart: chart{Series: []series{{Name: "a", Band: true, Points: []point{{X: 1, Y: 1, Lo: 0, Hi: 2, Href: "/point?x=1"}}}}}.svg()}}},
		"point.html":   pointView{Figure: fig, Report: &audit.Report{Plot: ti, Points: []audit.Point{*pt}}, Point: pt, X: "samples", Y: "loss", Reexecute: true, Query: map[string][]string{"figure": {"fig"}, "x": {"1"}}},
		"claims.html": &claimsView{Doc: &interim.Doc{Figures: []interim.Figure{{Task: "plot/fig", Plotted: interim.PlottedRecorded}, {Task: "plot/g", Pending: "1 of 2"}}},
			Claims: []claimRow{{ClaimResult: cl, Findings: []findingRow{{Finding: cl.Findings[0], Points: []pointLink{{"ars", "/point?x=1"}}}}}}, Pending: []pendingRow{{"c2", "plot/g: 1 of 2"}}},
		"reexec.html":  &reexecView{Figure: "fig", Query: "x=1", Point: pt, Tasks: []provenance.Verified{{Task: "train/x", Verdict: "differs", Differ: []string{"a"}}}, First: &provenance.Verified{Task: "train/x", Verdict: "differs"}, Err: "e"},
		"runs.html":    []runRow{{Run: 1, Profile: "smoke", State: "finished", Done: 3}},
		"error.html":   "web: not recorded: train/x is no task of profile p",
		"compare.html": &compareView{A: 1, B: 2, Reran: []rerun{{Task: "plot/fig", Why: []string{"+ param x"}}}, ReranCut: 1, New: 1, Figures: []figureChange{{Task: "plot/fig", Files: []string{"fig.svg"}}}, Verdicts: []verdictChange{{"c1", "holds", ""}}},
	}
	for _, tm := range pages.Templates() {
		name := tm.Name()
		if !strings.HasSuffix(name, ".html") || name == "layout.html" {
			continue
		}
		data, ok := views[name]
		if !ok {
			t.Errorf("template %s has no test data", name)
			continue
		}
		var b strings.Builder
		if err := pages.ExecuteTemplate(&b, name, layoutData{Title: "t", Profile: "p", Refresh: true, Data: data}); err != nil {
			t.Errorf("%s: %v", name, err)
		} else if !strings.Contains(b.String(), "</html>") {
			t.Errorf("%s: no complete page", name)
		} else if name == "task.html" {
			// A short text output is shown whole, escaped; a binary one
			// (or a long one) by its content ID only.
			if page := b.String(); !strings.Contains(page, `<tr class="preview"><td colspan="3"><pre>{&#34;score&#34;: &lt;1&gt;}</pre></td></tr>`) || strings.Count(page, `class="preview"`) != 1 {
				t.Errorf("the task page's outputs:\n%s", page)
			}
		} else if name == "overview.html" {
			// A task that has reported shows its share of the budget; one
			// that has not (a tuning trial) shows dashes and its budget
			// alone, never a 0 that reads as no progress.
			page := b.String()
			if !strings.Contains(page, "in progress for 1m0s as of 12:34:56 (its latest snapshot") {
				t.Errorf("the overview of a run's snapshot does not say when the snapshot was written:\n%s", page)
			}
			if !strings.Contains(page, "critical-path schedule on 4 workers predicts 1h0m0s") {
				t.Errorf("the overview does not say on how many workers its remaining time is predicted:\n%s", page)
			}
			if !strings.Contains(page, `<td class="num left">≥ ~2h06m</td>`) {
				t.Errorf("the overview does not give the stage's task time left (at least, one of its two tasks untimed):\n%s", page)
			}
			if !strings.Contains(page, `<td class="num">1000</td><td class="num">100000 (1%)</td>`) || strings.Count(page, "<td class=\"num\">–</td>") != 2 ||
				!strings.Contains(page, `<td class="num">–</td><td class="num">100000</td>`) {
				t.Errorf("overview's running rows:\n%s", page)
			}
			// How long each has run, of its predicted time where the dry
			// run has one.
			if !strings.Contains(page, `<td class="num">100000</td><td class="num">1m12s of ~2m30s</td>`) || !strings.Contains(page, `<td class="num"></td><td class="num">1m30s</td>`) {
				t.Errorf("overview's running rows do not say how long each has run:\n%s", page)
			}
		}
	}
}

// ticks are round values inside the range; a log axis gets decades, and
// a range around zero gets 0, never -0.
func TestTicks(t *testing.T) {
	var got []string
	for _, tk := range ticks(-0.3, 1.1, false) {
		got = append(got, tk.label)
	}
	if strings.Join(got, " ") != "0 0.5 1" {
		t.Errorf("linear ticks %v", got)
	}
	// Plain decimals as the step needs them, never "1.5e+04"; far from 1
	// a power of ten with its exponent raised (written ^ here), as the
	// figures write 2×10⁶.
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{{0, 16000, "0 5000 10000 15000"}, {0, 0.7, "0 0.2 0.4 0.6"}, {0.1, 0.35, "0.1 0.15 0.2 0.25 0.3 0.35"}, {0, 3e6, "0 10^6 2×10^6 3×10^6"}, {-0.0012, 0.0001, "-0.001 -0.0005 0"},
		{0, 0.00003, "0 10^-5 2×10^-5 3×10^-5"}, {1e6, 2e6, "10^6 1.2×10^6 1.4×10^6 1.6×10^6 1.8×10^6 2×10^6"}, {-3e6, 0, "-3×10^6 -2×10^6 -10^6 0"}} {
		got = nil
		for _, tk := range ticks(c.lo, c.hi, false) {
			if tk.sup != "" {
				got = append(got, tk.label+"^"+tk.sup)
				continue
			}
			got = append(got, tk.label)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("linear ticks over [%v, %v]: %v, want %s", c.lo, c.hi, got, c.want)
		}
	}
	// Decades as the figures write them, 10 with a raised exponent.
	got = nil
	for _, tk := range ticks(-3.5, 4.2, true) {
		got = append(got, tk.svg())
	}
	if want := `10<tspan dy="-5" font-size="8">−3</tspan>`; len(got) != 4 || got[0] != want || !strings.HasSuffix(got[3], `>3</tspan>`) {
		t.Errorf("log ticks %v, want 4 decades from %s", got, want)
	}
	// Under two decades (the horizons 1 to 8, the noise levels 0.01 to
	// 0.5): 1, 2 and 5 of each decade, as numbers.
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{{0, math.Log10(8), "1 2 5"}, {-2, math.Log10(0.5), "0.01 0.02 0.05 0.1 0.2 0.5"}, {math.Log10(15), math.Log10(200), "20 50 100 200"}} {
		got = nil
		for _, tk := range ticks(c.lo, c.hi, true) {
			got = append(got, tk.label)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("log ticks over [%v, %v]: %v, want %s", c.lo, c.hi, got, c.want)
		}
	}
}

// downsample keeps the first and last points and at most max.
func TestDownsample(t *testing.T) {
	xs := make([]int, 250_001)
	for i := range xs {
		xs[i] = i
	}
	d, cut := downsample(xs, maxCurvePoints)
	if !cut || len(d) != maxCurvePoints || d[0] != 0 || d[len(d)-1] != 250_000 {
		t.Errorf("%d points, cut %v, ends %d %d", len(d), cut, d[0], d[len(d)-1])
	}
	if d, cut := downsample(xs[:10], maxCurvePoints); cut || len(d) != 10 {
		t.Errorf("a short series was cut")
	}
}

// changedKeys names the keys whose values differ, a key missing on one
// side included, sorted.
func TestChangedKeys(t *testing.T) {
	got := changedKeys(map[string]string{"a": "1", "b": "2", "c": "3"}, map[string]string{"b": "2", "c": "4", "d": "5"})
	if strings.Join(got, ",") != "a,c,d" {
		t.Errorf("changed %v", got)
	}
}

// A running task's budget is what its runner says it consumes at most,
// whatever the parameter is called: the smoke profile's online-regret
// runs (rounds "t"), training runs (budget from dag.yaml) and tuning
// trials all show one; a task whose runner says nothing (a plot) has
// none. The numbers are the smoke profile's own in dag.yaml.
func TestRunningBudgetIsTheRunnersCost(t *testing.T) {
	plan, err := dag.LoadProfile("../../dag.yaml", "smoke", stages.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"train/olr/d=10/method=actionrs/seed=5488/t=10000": 10000,
		"plot/fig2-linreg": 0,
	}
	seen, trials := map[string]bool{}, 0
	for _, tk := range plan.Tasks {
		if tk.Parent != nil {
			trials++
		}
		if w, ok := want[tk.Path]; ok {
			seen[tk.Path] = true
			if got := budgetOf(tk); got != w {
				t.Errorf("%s: budget %v, want %v", tk.Path, got, w)
			}
		}
		// A tuning trial is a part of its tune task (which only chooses).
		if (strings.HasPrefix(tk.Path, "train/") || tk.Parent != nil) && budgetOf(tk) <= 0 {
			t.Errorf("%s: no budget", tk.Path)
		}
	}
	if len(seen) != len(want) || trials == 0 {
		t.Errorf("of %v the smoke profile plans only %v, and %d tuning trials", want, seen, trials)
	}
}

// A percentage is rounded down: a stage with one task left is not shown
// finished.
func TestPercentRoundsDown(t *testing.T) {
	for _, c := range []struct {
		a, b float64
		want string
	}{{299, 300, "99%"}, {300, 300, "100%"}, {0, 0, "0%"}, {1, 20027, "0%"}, {844000, 1e6, "84%"}} {
		if got := percent(c.a, c.b); got != c.want {
			t.Errorf("percent(%v, %v) = %s, want %s", c.a, c.b, got, c.want)
		}
	}
}

// A run that recorded only its start is running while a run holds the
// store (its latest run), and was killed otherwise; the overview of a
// store at rest after such a run says so and that the command resumes it.
func TestKilledRunIsNotInProgress(t *testing.T) {
	for _, c := range []struct {
		state string
		live  bool
		want  string
	}{{"started", true, "running"}, {"started", false, "killed (no end recorded)"}, {"finished", false, "finished"}, {"interrupted", true, "interrupted"}} {
		if got := runState(c.state, c.live); got != c.want {
			t.Errorf("runState(%q, live %v) = %q, want %q", c.state, c.live, got, c.want)
		}
	}
	var b strings.Builder
	ov := &Overview{Tasks: 3, Done: 1, Run: 2, Killed: true, Stages: []StageCounts{{Stage: "train/x", Tasks: 3, Done: 1}}, Running: []Running{}, Failures: []Failure{}}
	if err := pages.ExecuteTemplate(&b, "overview.html", layoutData{Title: "t", Profile: "p", Data: ov}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "No run in progress (latest run 2 ended without recording its end: it was killed; the same command resumes it)") || strings.Contains(b.String(), "in progress for") {
		t.Errorf("the overview of a killed run's store:\n%s", b.String())
	}
}

// A panel of a figure's page is titled as the figure draws it: the plot's
// panel_title with its panel_labels ("Swimmer-v2 (d/p = 8)", "d = 10"),
// or "panel KEY" where the plot gives no title.
func TestPanelTitle(t *testing.T) {
	cs := curveStyle{title: "%s", panels: map[string]string{"swimmer": "Swimmer-v2 (d/p = 8)"}}
	d := curveStyle{title: "d = %s", panels: map[string]string{}}
	for _, c := range []struct {
		cs   curveStyle
		key  string
		want string
	}{{cs, "swimmer", "Swimmer-v2 (d/p = 8)"}, {cs, "ant", "ant"}, {d, "10", "d = 10"}, {curveStyle{}, "10", "panel 10"}, {curveStyle{title: "%s vs %s"}, "10", "panel 10"}} {
		if got := c.cs.panelTitle(c.key); got != c.want {
			t.Errorf("panel %q under %q: %q, want %q", c.key, c.cs.title, got, c.want)
		}
	}
}

// A stage's time left says how much of it is known: every task left
// timed, some, none; nothing left or nothing predicted shows nothing;
// done tasks the build would compute anew are counted.
func TestStageTimeLeft(t *testing.T) {
	for _, c := range []struct {
		c    StageCounts
		want string
	}{
		{StageCounts{Tasks: 10860, Done: 4396, Pending: 6464, Left: 10*time.Hour + 33*time.Minute + 2*time.Second, LeftTasks: 6464, LeftTimed: 6464}, "~10h33m"},
		{StageCounts{Tasks: 600, Pending: 600, Left: 42*time.Minute + 53*time.Second, LeftTasks: 600, LeftTimed: 599}, "≥ ~43m"},
		{StageCounts{Tasks: 1, Running: 1, Left: 59*time.Minute + 40*time.Second, LeftTasks: 1, LeftTimed: 1}, "~1h00m"},
		{StageCounts{Tasks: 2, Done: 1, Failed: 1, Left: 1400 * time.Millisecond, LeftTasks: 1, LeftTimed: 1}, "~1s"},
		{StageCounts{Tasks: 600, Pending: 600, LeftTasks: 600}, "?"},
		{StageCounts{Tasks: 5, Done: 5}, ""},
		// A plot recorded by an earlier build whose plot code changed.
		{StageCounts{Tasks: 1, Done: 1, Left: 300 * time.Millisecond, LeftTasks: 1, LeftTimed: 1, LeftChanged: 1}, "~0s, 1 changed since it ran"},
		{StageCounts{Tasks: 10, Done: 6, Running: 1, Pending: 2, Failed: 1, Left: time.Hour, LeftTasks: 7, LeftTimed: 7, LeftChanged: 3}, "~1h00m, 3 changed since they ran"},
	} {
		if got := c.c.LeftText(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.c, got, c.want)
		}
	}
}

// A tick's label stays inside the chart: an x label is centred on its
// tick, so the last one (100000 at the frame's right edge, as Fig. 1's
// sample axis ends) needs half its width beyond the frame, and a y label
// ends left of its tick and must clear the rotated axis title. Widths are
// bounded by 0.64 em a character (DejaVu Sans's digits, 0.636 em, the
// widest of the fonts a browser falls back to here; a raised exponent
// counts as a full character).
func TestChartTickLabelsInside(t *testing.T) {
	label := regexp.MustCompile(`<text x="([0-9.]+)" y="[0-9.]+" font-size="11" text-anchor="(middle|end)">(.*?)</text>`)
	tag := regexp.MustCompile(`<[^>]*>`)
	for _, c := range []chart{
		{XLabel: "Number of samples", YLabel: "Test accuracy", Series: []series{{Points: []point{{X: 0, Y: 0.1}, {X: 100000, Y: 0.9}}}}},
		{XLabel: "samples", YLabel: "return", Series: []series{{Points: []point{{X: 0, Y: -3e6}, {X: 2e6, Y: 1e5}}}}},
		{XLabel: "samples", YLabel: "loss", LogX: true, LogY: true, Series: []series{{Points: []point{{X: 1e-5, Y: 1e-6}, {X: 1e7, Y: 12}}}}},
	} {
		svg := string(c.svg())
		ms := label.FindAllStringSubmatch(svg, -1)
		if len(ms) < 4 {
			t.Fatalf("%d tick labels in\n%s", len(ms), svg)
		}
		for _, m := range ms {
			x, _ := strconv.ParseFloat(m[1], 64)
			text := tag.ReplaceAllString(m[3], "")
			w := 0.64 * 11 * float64(utf8.RuneCountInString(text))
			lo, hi := x-w/2, x+w/2
			if m[2] == "end" {
				lo, hi = x-w, x
			}
			if lo < 20 || hi > chartW {
				t.Errorf("tick label %q spans [%.0f, %.0f] px; the chart is %d px wide and its y title takes the first 20", text, lo, hi, chartW)
			}
		}
	}
}
