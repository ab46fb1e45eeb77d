package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryCommandsJSON runs every command with --json on a smoke store
// and parses what it prints: exactly one JSON document (an object), with
// the keys that carry the text output's content and summary. The
// streaming commands' --jsonl is one object per line, ending with a
// summary object.
func TestEveryCommandsJSON(t *testing.T) {
	t.Parallel() // no clock in its checks; see tests.md
	bin, root, dir, common := smokeStore(t)
	storeDir := filepath.Join(dir, "store")
	const (
		train = "train/linreg/d=10/method=ars/seed=5488"
		tune  = "tune/linreg/d=10/method=ars"
	)
	cases := []struct {
		args []string
		keys []string // top-level keys the document must have
	}{
		{[]string{"run"}, []string{"executed", "cached", "failed", "skipped", "figures"}},
		{[]string{"run", "--dry-run"}, []string{"tasks", "stages", "schedule"}},
		{[]string{"report"}, []string{"title", "method", "counts", "claims", "figures"}},
		{[]string{"status"}, []string{"profile", "store", "tasks", "total", "counts"}},
		{[]string{"status", "--times"}, []string{"profile", "stages", "total_task_time", "runs", "runs_wall_time", "left", "left_untimed", "left_wall", "left_workers"}},
		{[]string{"dag"}, []string{"profile", "file", "stages", "tasks"}},
		{[]string{"why", train}, []string{"profile", "task", "do", "reason", "action", "recorded_run", "unchanged"}},
		{[]string{"events", train}, []string{"type", "task", "runs", "events", "iterations", "event_list", "iteration_list"}},
		{[]string{"show", tune}, []string{"profile", "task", "action", "run", "output", "planned", "files"}},
		{[]string{"show", tune, "table.csv"}, []string{"profile", "task", "output", "file", "id", "bytes", "planned", "text"}},
		{[]string{"audit", "fig2-linreg.svg"}, []string{"figure", "id", "plot", "points"}},
		{[]string{"replay", train, "--until", "10"}, []string{"task", "action", "recorded_run", "recorded_events", "equal_events", "streams_equal"}},
		{[]string{"verify", "--sample", "2"}, []string{"profile", "recorded", "selected", "verdicts", "reproduced", "tasks"}},
		{[]string{"gc", "--dry-run"}, []string{"entries", "referenced", "removed", "dry_run"}},
		{[]string{"export", "plot/fig3c-lqr", "--to", filepath.Join(storeDir, "..", "lqr.bundle")}, []string{"file", "bytes", "tasks", "entries"}},
		{[]string{"compare", filepath.Join(dir, "fig"), filepath.Join(dir, "fig")}, []string{"a", "b", "claims", "same", "differ", "only_a", "only_b"}},
		{[]string{"publish", "--to", filepath.Join(storeDir, "..", "published")}, []string{"profile", "revision", "code_identity", "tasks", "figures", "outputs", "stages", "machine"}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			out, code := cliStdout(t, bin, root, withFlags(append(c.args, "--json"), common...)...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, out)
			}
			doc := oneDocument(t, out)
			for _, k := range c.keys {
				if _, ok := doc[k]; !ok {
					t.Errorf("no key %q in %s", k, abbreviate(out))
				}
			}
		})
	}

	// Without --profile the inspection commands show the latest run's
	// profile, and say so.
	noProfile := []string{"--dag", filepath.Join(root, "dag.yaml"), "--store", storeDir}
	for _, args := range [][]string{{"status"}, {"why", train}, {"dag"}, {"show", tune}} {
		c := exec.Command(bin, append(args, noProfile...)...)
		c.Dir = root
		var stdout, stderr bytes.Buffer
		c.Stdout, c.Stderr = &stdout, &stderr
		if err := c.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		if !regexp.MustCompile(`^profile smoke \(the latest run's, run \d+; --profile picks another\)\n`).MatchString(stderr.String()) {
			t.Errorf("%v: stderr does not name the profile shown: %q", args, stderr.String())
		}
		if strings.Contains(stdout.String(), "never-run") || strings.Contains(stdout.String(), "would run") {
			t.Errorf("%v: shows the smoke store against another profile:\n%.600s", args, stdout.String())
		}
	}
	checkStatusUnderAnotherProfile(t, bin, root, storeDir)

	// A store path that holds no event log is refused, not created.
	missing := filepath.Join(dir, "typo")
	for _, args := range [][]string{{"status"}, {"gc", "--dry-run"}, {"why", train}, {"events", train}, {"verify", "--all"}} {
		out, code := cli(t, bin, root, append(args, "--store", missing)...)
		if code != 2 || !strings.Contains(out, "no event log at "+filepath.Join(missing, "events.db")) {
			t.Errorf("%v on a missing store: exit %d\n%s", args, code, out)
		}
		if _, err := os.Stat(missing); !os.IsNotExist(err) {
			t.Fatalf("%v created the missing store %s", args, missing)
		}
	}

	// Replay under another profile is refused with the transcript diff,
	// as why shows it.
	out, code := cli(t, bin, root, "replay", train, "--profile", "quick", "--store", storeDir, "--dag", filepath.Join(root, "dag.yaml"))
	if code != 1 || !strings.Contains(out, "refused") || !strings.Contains(out, "changes since the recorded run (- recorded, + now):") ||
		!regexp.MustCompile(`(?m)^  - param budget 6000$`).MatchString(out) || !regexp.MustCompile(`(?m)^  \+ param budget \d+$`).MatchString(out) {
		t.Errorf("replay under another profile: exit %d\n%s", code, out)
	}

	checkJSONLines(t, bin, root, train, common)
}

// checkStatusUnderAnotherProfile: shown under another profile, status
// says whose states they are.
func checkStatusUnderAnotherProfile(t *testing.T, bin, root, storeDir string) {
	t.Helper()
	js, code := cliStdout(t, bin, root, "status", "--json", "--profile", "quick", "--store", storeDir, "--dag", filepath.Join(root, "dag.yaml"))
	var st struct {
		OtherProfile int `json:"other_profile"`
		Tasks        []struct{ Task, State, Profile string }
	}
	if err := json.Unmarshal([]byte(js), &st); err != nil || code != 0 {
		t.Fatalf("status --profile quick: %v (exit %d)", err, code)
	}
	marked := 0
	for _, ts := range st.Tasks {
		if ts.State != "never-run" && ts.Profile != "smoke" {
			t.Errorf("%s: state %s recorded by the smoke run, not marked so (%q)", ts.Task, ts.State, ts.Profile)
		}
		if ts.Profile == "smoke" {
			marked++
		}
	}
	if marked == 0 || marked != st.OtherProfile {
		t.Errorf("status --profile quick: %d tasks marked smoke, other_profile %d", marked, st.OtherProfile)
	}
}

// checkJSONLines: one object per line, the last a summary whose counts
// match the lines before it.
func checkJSONLines(t *testing.T, bin, root, train string, common []string) {
	t.Helper()
	lines := jsonLines(t, bin, root, withFlags([]string{"events", train, "--jsonl"}, common...))
	last := lines[len(lines)-1]
	if last["type"] != "summary" || int(last["events"].(float64))+int(last["iterations"].(float64)) != len(lines)-1 {
		t.Errorf("events --jsonl: summary %v after %d lines", last, len(lines)-1)
	}
	lines = jsonLines(t, bin, root, withFlags([]string{"verify", "--sample", "3", "--jsonl"}, common...))
	last = lines[len(lines)-1]
	if len(lines) != 4 || last["selected"] != 3.0 || last["reproduced"] != 3.0 || lines[0]["verdict"] != "reproduced" {
		t.Errorf("verify --jsonl: %v", lines)
	}
}

// oneDocument decodes out as exactly one JSON object.
func oneDocument(t *testing.T, out string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, abbreviate(out))
	}
	var more any
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		t.Fatalf("more than one JSON document (next: %v, %v)\n%s", more, err, abbreviate(out))
	}
	return doc
}

// jsonLines runs a command and decodes each line of its stdout as an object.
func jsonLines(t *testing.T, bin, root string, args []string) []map[string]any {
	t.Helper()
	out, code := cliStdout(t, bin, root, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d\n%s", args, code, out)
	}
	var docs []map[string]any
	for i, l := range bytes.Split(bytes.TrimSuffix([]byte(out), []byte("\n")), []byte("\n")) {
		var doc map[string]any
		if err := json.Unmarshal(l, &doc); err != nil {
			t.Fatalf("%v: line %d is not a JSON object: %v\n%s", args, i+1, err, l)
		}
		docs = append(docs, doc)
	}
	if len(docs) < 2 {
		t.Fatalf("%v: %d lines", args, len(docs))
	}
	return docs
}

func abbreviate(s string) string {
	if len(s) > 600 {
		return s[:600] + "..."
	}
	return s
}
