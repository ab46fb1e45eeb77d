package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"zorepro/pipeline"
	"zorepro/pipeline/provenance"
	"zorepro/pipeline/store"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/stages/audit"
)

// auditCmd recomputes every point of a figure (or every claim of the
// report) from its recorded events.
type auditCmd struct {
	planFlags
	outputFlags
	figures, curve, panel, x string
	figure                   string
}

func (c *auditCmd) doc() commandDoc {
	return commandDoc{name: "audit", args: "FIGURE", summary: "recompute every point of a figure from its events; --x: the chain behind one point",
		detail: "FIGURE is a file under --figures (any of its PNG, SVG or CSV), the name of one the profile's plots recorded\n" +
			"(a store just pulled or imported need not export them first; a name without an extension is its SVG:\n" +
			"fig3c-lqr), or an artifact ID."}
}

func (c *auditCmd) define(f *flagSet) {
	c.planFlags.define(f)
	c.outputFlags.define(f, false)
	figuresFlag(f, &c.figures)
	f.String(&c.curve, "curve", "", "audit only this curve (its key, e.g. ars)")
	f.String(&c.panel, "panel", "", "audit only this panel (its key, e.g. 1000)")
	f.String(&c.x, "x", "", "audit the plotted point nearest this x, with the chain behind it")
}

func (c *auditCmd) check(args []string) []string {
	var p []string
	if len(args) != 1 {
		p = append(p, fmt.Sprintf("pipeline audit: takes exactly one FIGURE argument (a file under --figures or an artifact ID), got %d", len(args)))
	} else {
		c.figure = args[0]
	}
	if c.x != "" {
		if x, err := strconv.ParseFloat(c.x, 64); err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			p = append(p, fmt.Sprintf("pipeline audit: --x %q is not a finite number", c.x))
		}
	}
	return p
}

func (c *auditCmd) run(inv *invocation) (int, error) {
	return c.reading(inv, func(eng *pipeline.Engine) (int, error) { return c.audit(eng, inv.stdout) })
}

func (c *auditCmd) audit(eng *pipeline.Engine, stdout io.Writer) (int, error) {
	ref := c.figure
	var content []byte
	for _, p := range []string{ref, filepath.Join(c.figures, ref)} {
		if b, err := os.ReadFile(p); err == nil {
			content, ref = b, p
			break
		}
	}
	if content == nil && !strings.HasPrefix(ref, "xxh64-") {
		// Not exported here (a store just pulled or imported): the file of
		// that name the profile's figure tasks recorded.
		b, figs, err := recordedFigure(eng, ref)
		if err != nil {
			return exitFailed, err
		}
		if b == nil {
			return exitInvalid, notAFigure(ref, c.figures, figs)
		}
		content = b
	}
	src, err := provenance.New(eng).FindFigure(ref, content)
	if err != nil {
		if errors.Is(err, provenance.ErrNotRecorded) || content == nil {
			return exitInvalid, err
		}
		return exitFailed, err
	}
	if t := eng.Plan.Task(src.Production.Task); t != nil && t.Kind.Name() == "report" {
		return c.auditReport(eng, ref, src, stdout)
	}
	rep, err := audit.New(provenance.New(eng), eng.Events).Figure(ref, src, audit.Selection{Panel: c.panel, Curve: c.curve, X: c.x})
	if errors.Is(err, audit.ErrSelection) {
		return exitInvalid, err
	} else if err != nil {
		return exitFailed, err
	}
	if c.json {
		if err := json.NewEncoder(stdout).Encode(rep); err != nil {
			return exitFailed, err
		}
	} else {
		printAudit(stdout, rep, c.x != "")
	}
	if rep.Equal != rep.Checked {
		return exitFailed, fmt.Errorf("audit: %d of %d points differ from the values recomputed from their events", rep.Checked-rep.Equal, rep.Checked)
	}
	return exitOK, nil
}

func printAudit(w io.Writer, rep *audit.Report, detail bool) {
	p := rep.Plot
	fmt.Fprintf(w, "figure %s (%s, entry %s)\n", rep.Figure, rep.ID, rep.Entry)
	fmt.Fprintf(w, "  plot task %s\n    action %s, output %s, computed in run %d\n    code %s\n", p.Task, p.Action, p.Output, p.Run, p.Code)
	platformShown = strings.Join(p.Platform, ", ")
	fmt.Fprintf(w, "    platform: %s (the same for every task below unless one says otherwise)\n", platformShown)
	fmt.Fprintf(w, "    plots %s against %s (%s mode) over %d inputs; band: %s\n", rep.Y, rep.X, rep.Mode, len(p.Inputs), rep.Band)
	fmt.Fprintf(w, "  every random stream is %s\n", stream.Derivation)
	if !detail {
		fmt.Fprintf(w, "  inputs (%d):\n", len(p.Inputs))
		for _, in := range p.Inputs {
			fmt.Fprintf(w, "    %s %s <- %s\n", in.Slot, in.Output, in.Task)
		}
	}
	for _, pt := range rep.Points {
		printPoint(w, rep, pt)
	}
	fmt.Fprintf(w, "%d of %d plotted points equal, bit for bit, the values recomputed from %d recorded events\n", rep.Equal, rep.Checked, rep.Events)
	if !detail {
		fmt.Fprintln(w, "(give --curve/--panel and --x for the chain behind one point)")
	}
}

func printPoint(w io.Writer, rep *audit.Report, pt audit.Point) {
	where := "curve " + pt.Curve
	if pt.Panel != "" {
		where = "panel " + pt.Panel + ", " + where
	}
	fmt.Fprintf(w, "\npoint %s, %s = %s\n", where, rep.X, task.FormatFloat(pt.X))
	fmt.Fprintf(w, "  plotted:    mean %s, band [%s, %s], n = %d\n", task.FormatFloat(pt.Plotted.Mean), task.FormatFloat(pt.Plotted.Lo), task.FormatFloat(pt.Plotted.Hi), pt.Plotted.N)
	verdict := "equal bit for bit"
	if !pt.Equal {
		verdict = "DIFFERENT"
	}
	fmt.Fprintf(w, "  recomputed: mean %s, band [%s, %s], n = %d from the events below: %s\n", task.FormatFloat(pt.Recomputed.Mean), task.FormatFloat(pt.Recomputed.Lo), task.FormatFloat(pt.Recomputed.Hi), pt.Recomputed.N, verdict)
	for _, pr := range pt.Problems {
		fmt.Fprintf(w, "  problem: %s\n", pr)
	}
	for _, s := range pt.Seeds {
		fmt.Fprintf(w, "  seed %d: %s = %s\n", s.Seed, rep.Y, task.FormatFloat(s.Y))
		printTask(w, "evaluate", s.Evaluate)
		if s.Event != nil {
			fmt.Fprintf(w, "      event: iteration %d, samples %d, params digest %016x%s\n", s.Event.Iteration, s.Event.Samples, s.Event.Digest, metricsText(s.Event.Metrics))
		}
		if s.Train != nil {
			printTask(w, "train", s.Train)
			if s.TrainEvent != nil {
				fmt.Fprintf(w, "      event: iteration %d, samples consumed %d, params digest %016x%s\n", s.TrainEvent.Iteration, s.TrainEvent.Samples, s.TrainEvent.Digest, metricsText(s.TrainEvent.Metrics))
			}
			if s.Snapshot != nil {
				verdict := "its trajectory output holds the evaluated snapshot (iteration, samples and digest equal)"
				if !*s.Snapshot {
					verdict = "its trajectory output DOES NOT hold the evaluated snapshot"
				}
				fmt.Fprintf(w, "      %s\n", verdict)
			}
			if s.Tune != nil {
				how := "overrode the params above"
				if !s.UsedTuned {
					how = "connected but not used (use_tuned: false)"
				}
				fmt.Fprintf(w, "      hyperparameters: %s %s (%s)\n", s.Tune.Task, s.Tune.Chosen.Summary(), how)
				printTask(w, "tune", s.Tune.TaskInfo)
			}
		}
		if s.Data != nil {
			printTask(w, "data", s.Data)
		}
	}
}

// platformShown is the platform printed in the header of an audit.
var platformShown string

func printTask(w io.Writer, role string, t *audit.TaskInfo) {
	if t == nil {
		return
	}
	fmt.Fprintf(w, "    %-8s %s\n", role, t.Task)
	runs := make([]string, len(t.Segments))
	for i, s := range t.Segments {
		runs[i] = strconv.FormatUint(s.Run, 10)
		if s.Resumed {
			runs[i] += fmt.Sprintf(" (resumed after iteration %d)", s.ResumedAt)
		}
	}
	fmt.Fprintf(w, "      action %s, output %s, run %s\n", t.Action, t.Output, strings.Join(runs, ", "))
	fmt.Fprintf(w, "      code %s\n", t.Code)
	if plat := strings.Join(t.Platform, ", "); plat != platformShown {
		fmt.Fprintf(w, "      platform: %s\n", plat)
	}
	if t.Seed != nil {
		fmt.Fprintf(w, "      seed %d\n", *t.Seed)
	}
	if len(t.Params) > 0 {
		fmt.Fprintf(w, "      params: %s\n", strings.Join(t.Params, "; "))
	}
	if t.Streams != nil {
		var fams []string
		for _, f := range t.Streams.Families {
			fams = append(fams, fmt.Sprintf("%s[%d indices] root %d scope %s", f.Name, f.Arity, f.Root, f.Scope))
		}
		fmt.Fprintf(w, "      streams: %s\n", strings.Join(fams, "; "))
	}
}

func metricsText(ms []task.Metric) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, ", %s %s", m.Name, task.FormatFloat(m.Value))
	}
	return b.String()
}

// auditReport audits a file of the reproduction report: every figure
// behind it against its events, every claim recomputed from them.
func (c *auditCmd) auditReport(eng *pipeline.Engine, ref string, src *provenance.FigureSource, stdout io.Writer) (int, error) {
	rep, err := audit.New(provenance.New(eng), eng.Events).Claims(ref, src)
	if err != nil {
		return exitFailed, err
	}
	if c.json {
		if err := json.NewEncoder(stdout).Encode(rep); err != nil {
			return exitFailed, err
		}
	} else {
		fmt.Fprintf(stdout, "report %s (%s)\n  report task %s, output %s, computed in run %d\n", rep.Report, rep.ID, rep.Task.Task, rep.Task.Output, rep.Task.Run)
		for _, f := range rep.Figures {
			fmt.Fprintf(stdout, "  figure %-22s %d of %d plotted points equal their recomputation from events\n", strings.TrimSuffix(f.Figure, ".svg"), f.Equal, f.Checked)
		}
		for _, ck := range rep.Claims {
			mark := "equal"
			if !ck.Equal {
				mark = "DIFFERS: " + ck.Problem
			}
			fmt.Fprintf(stdout, "  claim %-24s %-13s %s\n", ck.ID, ck.Verdict, mark)
		}
		fmt.Fprintf(stdout, "%d of %d claims recomputed, bit for bit, from the figures' per-seed numbers; %d of %d plotted points equal their recomputation from %d recorded events\n",
			rep.Equal, rep.Checked, rep.Points[0], rep.Points[1], rep.Events)
	}
	if rep.Equal != rep.Checked || rep.Points[0] != rep.Points[1] {
		return exitFailed, fmt.Errorf("audit: %d of %d claims and %d of %d points differ from their recomputation", rep.Checked-rep.Equal, rep.Checked, rep.Points[1]-rep.Points[0], rep.Points[1])
	}
	return exitOK, nil
}

// recordedFigure returns the bytes of the file named name among the
// figure files the plan's figure tasks recorded at the identities this
// binary and dag.yaml give them (nil if none has that name), and those
// files. A name without an extension is the figure's SVG (then its PNG,
// its CSV): "fig3c-lqr" is fig3c-lqr.svg.
func recordedFigure(eng *pipeline.Engine, name string) ([]byte, *figures, error) {
	xs, err := provenance.New(eng).Explain()
	if err != nil {
		return nil, nil, err
	}
	figs, err := figureFiles(eng, xs)
	if err != nil {
		return nil, nil, err
	}
	base := filepath.Base(name)
	names := []string{base}
	if filepath.Ext(base) == "" {
		names = []string{base + ".svg", base + ".png", base + ".csv"}
	}
	for _, n := range names {
		if id, ok := figs.Files[n]; ok {
			sid, err := store.ParseID(id)
			if err != nil {
				return nil, nil, err
			}
			b, err := eng.Store.Get(sid)
			return b, figs, err
		}
	}
	return nil, figs, nil
}

// notAFigure says why ref names no figure: no such file here or under
// the figures directory, no artifact ID, and none of the figures recorded
// for this binary and dag.yaml (named, with the figure tasks that have no
// output at their identity and why).
func notAFigure(ref, dir string, figs *figures) error {
	var recorded []string
	for name := range figs.Files {
		if filepath.Ext(name) == ".svg" || name == "report.html" {
			recorded = append(recorded, name)
		}
	}
	slices.Sort(recorded)
	msg := fmt.Sprintf("%s: no such file (here or under --figures %s), not an artifact ID (xxh64-...), and no figure of that name recorded for this binary and dag.yaml", ref, dir)
	if len(recorded) > 0 {
		msg += "; recorded: " + strings.Join(recorded, ", ")
	}
	if n := len(figs.Missing); n > 0 {
		shown := figs.Missing[:min(n, 4)]
		msg += fmt.Sprintf("; %d figure task(s) not recorded at their identity (run them first): %s", n, strings.Join(shown, "; "))
		if n > len(shown) {
			msg += fmt.Sprintf("; and %d more", n-len(shown))
		}
	}
	return errors.New(msg)
}
