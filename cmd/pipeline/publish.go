package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/atomicfile"
	"zorepro/pipeline/codeid"
	"zorepro/pipeline/provenance"
	"zorepro/pipeline/store"
)

// publishCmd writes a whole recorded profile's figures, tables and report,
// with manifest.json, to a directory: a published result.
type publishCmd struct {
	planFlags
	outputFlags
	to string
}

func (c *publishCmd) doc() commandDoc {
	return commandDoc{name: "publish", summary: "write a whole recorded profile's figures, tables and report with manifest.json to --to (a published result)",
		detail: "Every task of the profile must be recorded with this binary and dag.yaml. manifest.json names every file's content ID,\n" +
			"the revision and code identity, the task time per stage, the runs' wall time and the machine; verify --against\n" +
			"compares another store with it. A directory holding another profile's publication is refused."}
}

func (c *publishCmd) define(f *flagSet) {
	c.planFlags.define(f)
	c.outputFlags.define(f, false)
	f.String(&c.to, "to", "", "the directory to publish to")
}

func (c *publishCmd) check(args []string) []string {
	p := noArgs("publish", args)
	if c.to == "" {
		p = append(p, "pipeline publish: --to DIR is required")
	}
	return p
}

// Published is a published result's manifest.json: what a reader who
// reruns any part compares against (verify --against).
type Published struct {
	Format       int    `json:"format"`
	Profile      string `json:"profile"`
	Revision     string `json:"revision"`
	CodeIdentity string `json:"code_identity"`
	Tasks        int    `json:"tasks"`
	// Figures maps every published file (figures, their tables, the
	// report) to its content ID; Outputs each figure task to its output ID.
	Figures map[string]string `json:"figures"`
	Outputs map[string]string `json:"outputs"`
	// Stages are the task time per stage; RunsWall the wall time of the
	// runs that did the work.
	Stages   []provenance.StageTime `json:"stages"`
	TaskTime time.Duration          `json:"total_task_time"`
	Runs     []uint64               `json:"runs"`
	RunsWall time.Duration          `json:"runs_wall_time"`
	Machine  map[string]string      `json:"machine"`
}

// figures are the files of a plan's figure-exporting tasks (plots, the
// report) as the store records them at the plan's identities.
type figures struct {
	Files   map[string]string // file name → content ID (checked)
	Outputs map[string]string // task → output ID
	Missing []string          // "task: why", for each figure task with no output at its identity
}

// figureFiles reads the figures the plan's figure tasks have recorded
// under the identities this binary and dag.yaml give them (xs, from
// Explain), not a task's latest run: a store that also holds another
// profile's or another revision's run of the same task (horizon-long's
// plot/fig3d-horizon, say) still shows this profile's figures.
func figureFiles(eng *pipeline.Engine, xs []provenance.Explained) (*figures, error) {
	rec := provenance.New(eng)
	byTask := make(map[string]provenance.Explained, len(xs))
	for _, x := range xs {
		byTask[x.Task] = x
	}
	f := &figures{Files: map[string]string{}, Outputs: map[string]string{}}
	for _, t := range eng.Plan.Tasks {
		if fx, ok := t.Runner.(pipeline.FigureExporter); !ok || !fx.ExportFigures() {
			continue
		}
		x := byTask[t.Path]
		if x.Do != provenance.WouldCache {
			f.Missing = append(f.Missing, fmt.Sprintf("%s: not recorded for this binary and dag.yaml (%s)", t.Path, x.Reason))
			continue
		}
		es, err := rec.Checked(t.Path, x.Output)
		if err != nil {
			return nil, err
		}
		f.Outputs[t.Path] = x.Output
		for _, e := range es {
			f.Files[e.Name] = e.ID.String()
		}
	}
	return f, nil
}

// cmdPublish writes a complete recorded profile's figures, tables and
// report, with manifest.json, to --to: the published result of a run.
func (c *publishCmd) run(inv *invocation) (int, error) {
	return c.reading(inv, func(eng *pipeline.Engine) (int, error) { return c.publish(eng, inv.stdout) })
}

func (c *publishCmd) publish(eng *pipeline.Engine, stdout io.Writer) (int, error) {
	rec := provenance.New(eng)
	xs, err := rec.Explain()
	if err != nil {
		return exitFailed, err
	}
	var missing []string
	for _, x := range xs {
		if x.Do == provenance.WouldRun {
			missing = append(missing, x.Task)
		}
	}
	if len(missing) > 0 {
		return exitFailed, fmt.Errorf("%d of %d tasks of profile %s are not recorded with this binary and dag.yaml (e.g. %s): a published result is the whole profile; run it first",
			len(missing), len(xs), c.profile, strings.Join(missing[:min(3, len(missing))], ", "))
	}
	figs, err := figureFiles(eng, xs)
	if err != nil {
		return exitFailed, err
	}
	files := figs.Files
	tm, err := rec.Times()
	if err != nil {
		return exitFailed, err
	}
	v := readVersion()
	m := Published{Format: 1, Profile: c.profile, Revision: v.Revision, CodeIdentity: codeid.Stamp, Tasks: len(xs),
		Figures: files, Outputs: figs.Outputs, Stages: tm.Stages, TaskTime: tm.Total, Runs: tm.Runs, RunsWall: tm.RunsWall, Machine: machine()}
	if err := os.MkdirAll(c.to, 0o755); err != nil {
		return exitFailed, err
	}
	if prev, err := os.ReadFile(filepath.Join(c.to, "manifest.json")); err == nil {
		var p Published
		if err := json.Unmarshal(prev, &p); err != nil || p.Format == 0 {
			return exitInvalid, fmt.Errorf("--to %s holds a manifest.json that is not a published result's: publish to an empty directory", c.to)
		}
		if p.Profile != c.profile {
			return exitInvalid, fmt.Errorf("--to %s holds the published result of profile %s (revision %s): publishing profile %s there would overwrite it; publish to another directory, or remove that one first",
				c.to, p.Profile, p.Revision, c.profile)
		}
	}
	others, err := unlisted(c.to, files)
	if err != nil {
		return exitFailed, err
	}
	if len(others) > 0 {
		return exitInvalid, fmt.Errorf("--to %s holds %s, which this publication does not write (a file of another publication?): remove it, or publish to an empty directory", c.to, others[0])
	}
	for name, id := range files {
		sid, err := store.ParseID(id)
		if err != nil {
			return exitFailed, err
		}
		b, err := eng.Store.Get(sid)
		if err != nil {
			return exitFailed, err
		}
		if err := atomicfile.WriteFile(filepath.Join(c.to, name), b); err != nil {
			return exitFailed, err
		}
	}
	js, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return exitFailed, err
	}
	if err := atomicfile.WriteFile(filepath.Join(c.to, "manifest.json"), append(js, '\n')); err != nil {
		return exitFailed, err
	}
	if c.json {
		return exitOK, json.NewEncoder(stdout).Encode(m)
	}
	fmt.Fprintf(stdout, "published %d files of profile %s (%d tasks, %s of task time, %s of wall time in runs %v) to %s\n",
		len(files), c.profile, len(xs), tm.Total.Round(time.Second), tm.RunsWall.Round(time.Second), tm.Runs, c.to)
	return exitOK, nil
}

// machine describes this machine for a published manifest.
func machine() map[string]string {
	m := map[string]string{"cpus": fmt.Sprint(runtime.NumCPU()), "os": runtime.GOOS + "/" + runtime.GOARCH, "go": runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m["cpu"] = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// verifyAgainst compares the store's figure files with a published
// result's manifest: each file the same, different or missing here.
func verifyAgainst(eng *pipeline.Engine, against string, asJSON bool, stdout io.Writer) (int, error) {
	b, err := os.ReadFile(filepath.Join(against, "manifest.json"))
	if err != nil {
		return exitInvalid, fmt.Errorf("--against %s: %w", against, err)
	}
	var pub Published
	if err := json.Unmarshal(b, &pub); err != nil || pub.Format != 1 {
		return exitInvalid, fmt.Errorf("--against %s: manifest.json is not a published result's (%v)", against, err)
	}
	xs, err := provenance.New(eng).Explain()
	if err != nil {
		return exitFailed, err
	}
	figs, err := figureFiles(eng, xs)
	if err != nil {
		return exitFailed, err
	}
	files := figs.Files
	type diff struct {
		File      string `json:"file"`
		Published string `json:"published"`
		Here      string `json:"here,omitempty"`
		Verdict   string `json:"verdict"`
	}
	copies, err := publishedCopies(against, pub.Figures)
	if err != nil {
		return exitInvalid, fmt.Errorf("--against %s: %w", against, err)
	}
	var ds []diff
	same := 0
	for _, name := range slices.Sorted(maps.Keys(copies)) {
		d := diff{File: name, Published: pub.Figures[name], Here: files[name]}
		switch {
		case copies[name] != "":
			d.Verdict = copies[name]
		case d.Here == "":
			d.Verdict = "missing here"
		case d.Here == d.Published:
			d.Verdict = "same"
			same++
		default:
			d.Verdict = "differs"
		}
		ds = append(ds, d)
	}
	if asJSON {
		json.NewEncoder(stdout).Encode(map[string]any{"against": against, "profile": pub.Profile, "published_revision": pub.Revision, "files": ds, "same": same, "not_recorded": figs.Missing})
	} else {
		for _, m := range figs.Missing {
			fmt.Fprintln(stdout, m)
		}
		for _, d := range ds {
			if d.Verdict != "same" {
				if copies[d.File] != "" {
					fmt.Fprintf(stdout, "%s: %s\n", d.File, d.Verdict)
					continue
				}
				fmt.Fprintf(stdout, "%-13s %s (published %s, here %s)\n", d.Verdict, d.File, d.Published, cmpOr(d.Here, "none"))
			}
		}
		fmt.Fprintf(stdout, "%d of %d published files (%s, revision %s) are the same bytes here\n", same, len(ds), against, pub.Revision)
	}
	if same != len(ds) {
		return exitFailed, fmt.Errorf("verify --against: %d of %d published files differ, are missing here or are not intact in %s", len(ds)-same, len(ds), against)
	}
	return exitOK, nil
}

// publishedCopies checks a published directory's files against its
// manifest's content IDs, so that verify --against never vouches for a
// copy whose bytes are not the ones it lists (an edited figure, a checkout
// that rewrote line endings). It returns, for every listed file and every
// file the manifest does not list, "" when the copy holds the listed
// bytes, else what is wrong with it.
func publishedCopies(dir string, listed map[string]string) (map[string]string, error) {
	others, err := unlisted(dir, listed)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, name := range others {
		out[name] = "not in the manifest"
	}
	for name, id := range listed {
		if name != filepath.Base(name) || name == "." || name == ".." {
			out[name] = "refused: the manifest names a path, not a file of the published directory"
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case errors.Is(err, os.ErrNotExist):
			out[name] = "missing from the published result"
		case err != nil:
			return nil, err
		case store.Sum(b).String() != id:
			out[name] = "published copy altered (its bytes are not the manifest's)"
		default:
			out[name] = ""
		}
	}
	return out, nil
}

// unlisted returns the names in a published directory, in order, that are
// neither listed nor its manifest.json.
func unlisted(dir string, listed map[string]string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if _, ok := listed[e.Name()]; !ok && e.Name() != "manifest.json" {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

func cmpOr(a, b string) string {
	if a == "" {
		return b
	}
	return a
}
