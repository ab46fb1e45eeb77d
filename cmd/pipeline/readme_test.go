package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"zorepro/pipeline/dag"
	"zorepro/stages"
)

// readme returns the repository's README.md.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The README's table of profiles gives each profile of dag.yaml with the
// number of tasks `pipeline dag` plans for it (issue 27: its counts were
// off by one).
func TestREADMEProfileTable(t *testing.T) {
	text, root := readme(t), repoRoot(t)
	row := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| ([0-9,]+) \\|")
	rows := row.FindAllStringSubmatch(text, -1)
	raw, err := dag.Read(filepath.Join(root, "dag.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	profiles, _ := raw["profiles"].(map[string]any)
	if len(rows) != len(profiles) {
		t.Errorf("the README's profile table has %d rows, dag.yaml %d profiles", len(rows), len(profiles))
	}
	for _, r := range rows {
		if _, ok := profiles[r[1]]; !ok {
			t.Errorf("the README lists profile %s, which dag.yaml does not define", r[1])
			continue
		}
		plan, err := dag.Load(filepath.Join(root, "dag.yaml"), r[1], stages.Kinds())
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := strconv.Atoi(strings.ReplaceAll(r[2], ",", "")); n != len(plan.Tasks) {
			t.Errorf("the README gives profile %s %s tasks; pipeline dag plans %d", r[1], r[2], len(plan.Tasks))
		}
	}
}

// readmeExamples returns the README's complete command examples: the
// `bin/pipeline ...` lines of its code blocks and its inline code spans,
// without their comments, leaving out synopses (placeholders in capitals,
// [optional] parts, "|" alternatives, "...") and the cluster's (make
// test-slurm runs those on a real cluster).
func readmeExamples(text string) []string {
	var out []string
	add := func(cmd string) {
		cmd = strings.TrimSpace(cmd)
		if i := strings.Index(cmd, " #"); i >= 0 {
			cmd = strings.TrimSpace(cmd[:i])
		}
		if strings.ContainsAny(cmd, "[]|\\<") || strings.Contains(cmd, "...") || strings.Contains(cmd, "…") ||
			regexp.MustCompile(`\b[A-Z]{2,}\b`).MatchString(cmd) || strings.Contains(cmd, "--executor slurm") || strings.Contains(cmd, " worker ") {
			return
		}
		out = append(out, cmd)
	}
	inBlock := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock && strings.HasPrefix(line, "bin/pipeline ") {
			add(line)
		}
	}
	for _, m := range regexp.MustCompile("`(bin/pipeline [^`]+)`").FindAllStringSubmatch(strings.ReplaceAll(text, "\n", " "), -1) {
		add(m[1])
	}
	return out
}

// Every complete command example of the README runs, as written, against
// a smoke store in the directory layout the README assumes (dag.yaml,
// artifacts/, figures/), and exits 0 (issue 27: its show example named a
// task no smoke store has). A run example without --profile runs the
// smoke profile there, so that it finds its work recorded.
func TestREADMEExamplesRun(t *testing.T) {
	examples := readmeExamples(readme(t))
	if len(examples) < 8 {
		t.Fatalf("only %d command examples found in the README: %q", len(examples), examples)
	}
	bin, root, dir := binary(t), repoRoot(t), t.TempDir()
	b, err := os.ReadFile(filepath.Join(root, "dag.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dag.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, ".data"), filepath.Join(dir, ".data")); err != nil {
		t.Fatal(err)
	}
	pipelineRun(t, bin, dir, "--profile", "smoke")
	for _, ex := range examples {
		args := strings.Fields(strings.TrimPrefix(ex, "bin/pipeline "))
		if args[0] == "run" && !strings.Contains(ex, "--profile") {
			args = append(args, "--profile", "smoke")
		}
		if out, code := cli(t, bin, dir, args...); code != 0 {
			t.Errorf("%s: exit %d\n%.2000s", ex, code, out)
		}
	}
	t.Logf("%d examples ran: %q", len(examples), examples)
}
