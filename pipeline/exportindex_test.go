package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"zorepro/pipeline/task"
)

// figKind's tasks output one file for each name of their "files"
// parameter, holding the "text" parameter, and are exported to the figures
// directory, as plot tasks are.
type figKind struct{}

func (figKind) Name() string       { return "fig" }
func (figKind) Version() int       { return 1 }
func (figKind) Slots() []task.Slot { return nil }
func (figKind) Plan(p *task.Params) task.Runner {
	return &figRunner{files: p.Strings("files", task.Required()), text: p.String("text", task.Required())}
}

type figRunner struct {
	files []string
	text  string
}

func (r *figRunner) Components() []any   { return []any{strings.Builder{}} } // package "strings"
func (r *figRunner) ExportFigures() bool { return true }
func (r *figRunner) Run(ctx context.Context, env task.Env) error {
	for _, f := range r.files {
		if err := env.Output(f, []byte(r.text+" "+f)); err != nil {
			return err
		}
	}
	return nil
}

const figDAG = `
version: 1
stages:
  - name: plot/one
    kind: fig
    params: {files: [one.svg, one-view.svg], text: first}
  - name: plot/two
    kind: fig
    params: {files: [two.svg], text: first}
`

// A run's figure export removes what an earlier export of the same task
// wrote and this one no longer does (issue: a figure that stops producing
// a view left its old file behind), and nothing else: not a file a person
// changed or put there, not the files of a task this run does not export.
func TestExportRemovesFiguresATaskNoLongerWrites(t *testing.T) {
	h := newHarness(t)
	h.extra = map[string]task.Kind{"fig": figKind{}}
	h.figures = filepath.Join(h.dir, "figures")
	h.dagYAML = figDAG
	h.mustRun("", 1)
	ls := func() []string {
		t.Helper()
		ents, err := os.ReadDir(h.figures)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), ".") {
				names = append(names, e.Name())
			}
		}
		return names
	}
	eq(t, "first export", ls(), []string{"one-view.svg", "one.svg", "two.svg"})
	if err := os.WriteFile(filepath.Join(h.figures, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}

	// plot/one stops writing its view; plot/two stops writing two.svg
	// but is not exported by this run (only plot/one is its target), so
	// its file stays.
	h.dagYAML = strings.NewReplacer("files: [one.svg, one-view.svg], text: first", "files: [one.svg], text: second",
		"files: [two.svg], text: first", "files: [two-b.svg], text: second").Replace(figDAG)
	h.only = []string{"plot/one"}
	h.mustRun("", 1)
	h.only = nil
	eq(t, "after plot/one alone", ls(), []string{"notes.txt", "one.svg", "two.svg"})
	if b, _ := os.ReadFile(filepath.Join(h.figures, "one.svg")); string(b) != "second one.svg" {
		t.Errorf("one.svg holds %q", b)
	}

	// A file the export wrote and a person then changed stays.
	if err := os.WriteFile(filepath.Join(h.figures, "two.svg"), []byte("edited"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.mustRun("", 1)
	eq(t, "after the whole dag", ls(), []string{"notes.txt", "one.svg", "two-b.svg", "two.svg"})

	// A malformed index is reported by name and rewritten; nothing is
	// removed on its account.
	index := filepath.Join(h.figures, ".pipeline-exports.json")
	if err := os.WriteFile(index, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.dagYAML = strings.Replace(h.dagYAML, "files: [one.svg], text: second", "files: [one.svg], text: third", 1)
	res, err := h.run(context.Background(), "", 1, filepath.Join(h.dir, "store"))
	if err == nil && !slices.Contains(res.Failed, "figures") {
		t.Fatalf("a malformed export index went unreported: %+v", res)
	}
	if msg := res.Errors["figures"]; !strings.Contains(msg, index) || !strings.Contains(msg, "malformed") {
		t.Errorf("the export's error does not name the malformed index: %q", msg)
	}
	if b, err := os.ReadFile(index); err != nil || !strings.Contains(string(b), `"plot/one"`) {
		t.Errorf("the index was not rewritten: %q, %v", b, err)
	}
	eq(t, "after the malformed index", ls(), []string{"notes.txt", "one.svg", "two-b.svg", "two.svg"})
}
