package main

import (
	"errors"
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
// test-slurm runs those on a real cluster), and those that serve the
// browser view (they serve until stopped; serve_test.go drives them).
func readmeExamples(text string) []string {
	var out []string
	add := func(cmd string) {
		cmd = strings.TrimSpace(cmd)
		if i := strings.Index(cmd, " #"); i >= 0 {
			cmd = strings.TrimSpace(cmd[:i])
		}
		if strings.ContainsAny(cmd, "[]|\\<") || strings.Contains(cmd, "...") || strings.Contains(cmd, "…") ||
			regexp.MustCompile(`\b[A-Z]{2,}\b`).MatchString(cmd) || strings.Contains(cmd, "--executor slurm") || strings.Contains(cmd, " worker ") ||
			strings.HasPrefix(cmd, "bin/pipeline serve") || strings.Contains(cmd, " --serve") {
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

// docs returns README.md and docs/*.md, concatenated.
func docs(t *testing.T) string {
	t.Helper()
	text := readme(t)
	paths, err := filepath.Glob(filepath.Join(repoRoot(t), "docs", "*.md"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text += "\n" + string(b)
	}
	return text
}

// The README is a first screen and an index (issue 43): at most 250
// lines, and within its first 40 the command a newcomer runs first and
// where its report lands.
func TestREADMEFirstScreen(t *testing.T) {
	lines := strings.Split(readme(t), "\n")
	if len(lines) > 250 {
		t.Errorf("README.md has %d lines; at most 250 (the rest belongs in docs/)", len(lines))
	}
	first := strings.Join(lines[:min(40, len(lines))], "\n")
	for _, want := range []string{"make smoke", "figures/report.html", "make quick", "make run", "make test", "results/paper/report.html"} {
		if !strings.Contains(first, want) {
			t.Errorf("README.md's first 40 lines lack %q", want)
		}
	}
	for _, m := range regexp.MustCompile(`\]\((docs/[^)#]+)`).FindAllStringSubmatch(readme(t), -1) {
		if _, err := os.Stat(filepath.Join(repoRoot(t), m[1])); err != nil {
			t.Errorf("README.md links %s: %v", m[1], err)
		}
	}
}

// Every complete command example of the README and docs/ runs, as written, against
// a smoke store in the directory layout the README assumes (dag.yaml,
// artifacts/, figures/), and exits 0 (issue 27: its show example named a
// task no smoke store has). A run example without --profile runs the
// smoke profile there, so that it finds its work recorded.
func TestREADMEExamplesRun(t *testing.T) {
	t.Parallel() // no clock in its checks; see tests.md
	examples := readmeExamples(docs(t))
	if len(examples) < 8 {
		t.Fatalf("only %d command examples found in the README and docs/: %q", len(examples), examples)
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

// The paper-scale block at the top of the README (between paperBegin and
// paperEnd) gives the published result's verdict counts, verbatim from
// results/paper/report.md (issue 30), and links the report, whose table
// gives every claim (issue 43: the README's first screen). Until
// results/paper is published the block says so.
const (
	paperBegin = "<!-- paper-scale claims: begin"
	paperEnd   = "<!-- paper-scale claims: end -->"
)

func TestREADMEPaperTable(t *testing.T) {
	text, root := readme(t), repoRoot(t)
	i, j := strings.Index(text, paperBegin), strings.Index(text, paperEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no paper-scale block (%q ... %q)", paperBegin, paperEnd)
	}
	if k := strings.Index(text, "## "); k >= 0 && k < i {
		t.Errorf("the paper-scale block is not at the top of README.md: %q comes first", text[k:k+strings.Index(text[k:], "\n")])
	}
	block := text[i:j]
	md, err := os.ReadFile(filepath.Join(root, "results", "paper", "report.md"))
	if os.IsNotExist(err) {
		if !strings.Contains(block, "not published yet") || strings.Contains(block, "holds") {
			t.Errorf("results/paper is not published, and the README's paper-scale block does not say so (or gives counts):\n%s", block)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	want, err := claimsSummary(string(md))
	if err != nil {
		t.Fatal(err)
	}
	counts := want[:strings.Index(want, "\n")]
	if !strings.Contains(block, counts) {
		t.Errorf("the README's paper-scale block lacks results/paper/report.md's verdict counts; paste them:\n%s", counts)
	}
	if !strings.Contains(block, "(results/paper/report.html)") {
		t.Errorf("the README's paper-scale block does not link results/paper/report.html:\n%s", block)
	}
}

// claimsSummary returns a report.md's verdict counts line and its summary
// table of claims.
func claimsSummary(md string) (string, error) {
	lines := strings.Split(md, "\n")
	start := -1
	for k, l := range lines {
		if strings.HasPrefix(l, "| claim |") {
			start = k
			break
		}
	}
	if start < 0 {
		return "", errors.New("report.md has no claims table")
	}
	end := start
	for end < len(lines) && strings.HasPrefix(lines[end], "|") {
		end++
	}
	head := start - 1
	for head >= 0 && strings.TrimSpace(lines[head]) == "" {
		head--
	}
	if head < 0 || !strings.HasPrefix(lines[head], "**") {
		return "", errors.New("report.md has no verdict counts line above its claims table")
	}
	return lines[head] + "\n\n" + strings.Join(lines[start:end], "\n") + "\n", nil
}

// claimsSummary on the quick profile's report shape: the counts line and
// the table, nothing after it.
func TestClaimsSummary(t *testing.T) {
	md := "# R\n\n> banner\n\n**3 holds · 1 reported**\n\n| claim | figure |\n|---|---|\n| a | f |\n\n## f\n\n| key |\n|---|\n"
	got, err := claimsSummary(md)
	if want := "**3 holds · 1 reported**\n\n| claim | figure |\n|---|---|\n| a | f |\n"; err != nil || got != want {
		t.Errorf("claimsSummary = %q, %v; want %q", got, err, want)
	}
	if _, err := claimsSummary("# R\n\n| claim |\n"); err == nil {
		t.Error("a table without its counts line accepted")
	}
}

// Every publication under results/ (a directory with a report.md:
// results/paper, and the crossover, horizon-variants and published
// profiles' once they run) is linked from the README with its verdict
// counts verbatim from its report.md, so that a result published beside
// the paper's cannot go unmentioned or keep the counts of an earlier
// publication.
func TestREADMENamesEveryPublication(t *testing.T) {
	text, root := readme(t), repoRoot(t)
	dirs, err := os.ReadDir(filepath.Join(root, "results"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dirs {
		md, err := os.ReadFile(filepath.Join(root, "results", d.Name(), "report.md"))
		if !d.IsDir() || os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		sum, err := claimsSummary(string(md))
		if err != nil {
			t.Fatalf("results/%s/report.md: %v", d.Name(), err)
		}
		link := "(results/" + d.Name() + "/report.html)"
		k := strings.Index(text, link)
		if k < 0 {
			t.Errorf("README.md does not link %s", link[1:len(link)-1])
			continue
		}
		// The counts follow the link within its paragraph.
		para := text[k:]
		if e := strings.Index(para, "\n\n"); e >= 0 {
			para = para[:e]
		}
		if counts := sum[:strings.Index(sum, "\n")]; !strings.Contains(para, counts) {
			t.Errorf("README.md links results/%s/report.html without its verdict counts in the same paragraph; paste them from its report.md:\n%s", d.Name(), counts)
		}
	}
	if n == 0 {
		t.Error("results/ holds no publication (results/paper/report.md is missing)")
	}
}
