package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"zorepro/pipeline"
	"zorepro/pipeline/provenance"
	"zorepro/pipeline/store"
)

// showCmd prints the files of a task's recorded output, or one file's
// bytes.
type showCmd struct {
	planFlags
	outputFlags
	task, file string
}

func (c *showCmd) doc() commandDoc {
	return commandDoc{name: "show", args: "TASK [FILE]", summary: "the files of a task's recorded output, or one file's bytes"}
}

func (c *showCmd) define(f *flagSet) {
	c.planFlags.define(f)
	c.outputFlags.define(f, false)
}

func (c *showCmd) check(args []string) []string {
	if len(args) != 1 && len(args) != 2 {
		return []string{fmt.Sprintf("pipeline show: takes a TASK and optionally one FILE of its output, got %d arguments", len(args))}
	}
	c.task = args[0]
	if len(args) == 2 {
		c.file = args[1]
	}
	return nil
}

// showFileDoc is what show TASK FILE --json prints: the file's bytes as
// text when they are UTF-8, in base64 otherwise.
type showFileDoc struct {
	Profile string `json:"profile"`
	Task    string `json:"task"`
	Output  string `json:"output"`
	File    string `json:"file"`
	ID      string `json:"id"`
	Bytes   int    `json:"bytes"`
	// Planned is false where the output shown is not the one this binary
	// and dag.yaml would reuse (none is recorded) but the latest.
	Planned bool   `json:"planned"`
	Text    string `json:"text,omitempty"`
	Base64  string `json:"base64,omitempty"`
}

// showFile is one file of a task's output, as `show --json` prints it.
// problem names what is wrong with a store entry a read failed on.
func problem(err error) string {
	switch {
	case errors.Is(err, store.ErrCorrupt):
		return "corrupt"
	case errors.Is(err, store.ErrNotFound):
		return "missing"
	}
	return "unreadable"
}

type showFile struct {
	Name  string `json:"name"`
	ID    string `json:"id"`
	Bytes int    `json:"bytes"`
	// Problem is "corrupt" or "missing" for an entry that fails its check.
	Problem string `json:"problem,omitempty"`
}

// cmdShow prints the recorded output of a task that this binary and
// dag.yaml would reuse (else, saying so, its latest): its files with their
// sizes and content IDs or, given FILE, that file's bytes exactly (e.g. a
// tuning table: `show tune/linreg/d=10/method=ars table.csv`).
func (c *showCmd) run(inv *invocation) (int, error) {
	return c.reading(inv, func(eng *pipeline.Engine) (int, error) { return c.show(eng, inv.stdout, inv.stderr) })
}

func (c *showCmd) show(eng *pipeline.Engine, stdout, stderr io.Writer) (int, error) {
	rec := provenance.New(eng)
	p, planned, err := rec.Production(c.task)
	switch {
	case errors.Is(err, provenance.ErrUnknownTask) || errors.Is(err, provenance.ErrNotRecorded):
		return exitInvalid, err
	case err != nil:
		return exitFailed, err
	case !planned:
		fmt.Fprintf(stderr, "note: %s: nothing is recorded for what this binary and dag.yaml would run (`why %s` says what changed); showing its latest recorded output, from run %d\n", p.Task, p.Task, p.Run)
	}
	manifest, err := eng.Manifest(p.Output)
	if err != nil {
		return exitFailed, fmt.Errorf("%s: output manifest %s: %w", p.Task, p.Output, err)
	}
	entries := map[string]store.ID{}
	for _, en := range manifest {
		entries[en.Name] = en.ID
	}
	names := slices.Sorted(maps.Keys(entries))
	if c.file != "" {
		id, ok := entries[c.file]
		if !ok {
			return exitInvalid, fmt.Errorf("%s: output %s has no file %q; its files are %s", p.Task, p.Output, c.file, strings.Join(names, ", "))
		}
		b, err := rec.ReadOutput(p.Task, p.Output, c.file)
		if err != nil {
			return exitFailed, err
		}
		if c.json {
			doc := showFileDoc{Profile: c.profile, Task: p.Task, Output: p.Output, File: c.file, ID: id.String(), Bytes: len(b), Planned: planned}
			if utf8.Valid(b) {
				doc.Text = string(b)
			} else {
				doc.Base64 = base64.StdEncoding.EncodeToString(b)
			}
			if err := json.NewEncoder(stdout).Encode(doc); err != nil {
				return exitFailed, err
			}
			return exitOK, nil
		}
		if _, err := stdout.Write(b); err != nil {
			return exitFailed, err
		}
		return exitOK, nil
	}
	files := make([]showFile, 0, len(names))
	bad := 0
	for _, name := range names {
		f := showFile{Name: name, ID: entries[name].String()}
		if b, err := eng.Store.Get(entries[name]); err != nil {
			f.Problem = problem(err)
			bad++
		} else {
			f.Bytes = len(b)
		}
		files = append(files, f)
	}
	if c.json {
		err := json.NewEncoder(stdout).Encode(map[string]any{"profile": c.profile, "task": p.Task, "action": p.Action, "run": p.Run, "output": p.Output, "planned": planned, "files": files})
		if err != nil {
			return exitFailed, err
		}
	} else {
		current := "the output this binary and dag.yaml would reuse"
		if !planned {
			current = "not what this binary and dag.yaml would run: `pipeline why " + p.Task + "` says what changed"
		}
		fmt.Fprintf(stdout, "%s: output %s (action %s, recorded in run %d; %s)\n", p.Task, p.Output, p.Action, p.Run, current)
		for _, f := range files {
			if f.Problem != "" {
				fmt.Fprintf(stdout, "  %-28s %10s        %s  (%s in the store)\n", f.Name, strings.ToUpper(f.Problem), f.ID, f.Problem)
				continue
			}
			fmt.Fprintf(stdout, "  %-28s %10d bytes  %s\n", f.Name, f.Bytes, f.ID)
		}
	}
	if bad > 0 {
		return exitFailed, fmt.Errorf("%s: %d of the %d files of output %s are corrupt or missing in the store (a run recomputes them)", p.Task, bad, len(files), p.Output)
	}
	return exitOK, nil
}
