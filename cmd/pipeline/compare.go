package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"zorepro/stages/report"
)

// compareCmd sets two reports' verdicts side by side, claim by claim: a
// run with the authors' hyperparameters against the tuned one, a rerun
// against the published result, one scale against another.
type compareCmd struct {
	outputFlags
	a, b string
}

func (c *compareCmd) doc() commandDoc {
	return commandDoc{name: "compare", args: "A B", summary: "two reports' verdicts side by side, claim by claim (A, B: a publication, a figures directory or a claims.json)",
		detail: "For every claim both reports test: its verdict in each and, where they differ, the statistic each\n" +
			"computed (value, 95% interval, seeds); then the claims only one report has. Reads the two claims.json\n" +
			"files only (no store): e.g. compare results/paper results/published. Exit 0 whether or not they agree."}
}

func (c *compareCmd) define(f *flagSet) { c.outputFlags.define(f, false) }

func (c *compareCmd) check(args []string) []string {
	if len(args) != 2 {
		return []string{fmt.Sprintf("pipeline compare: takes two reports (A B), got %d arguments", len(args))}
	}
	c.a, c.b = args[0], args[1]
	return nil
}

func (c *compareCmd) run(inv *invocation) (int, error) {
	a, err := readClaims(c.a)
	if err != nil {
		return exitInvalid, err
	}
	b, err := readClaims(c.b)
	if err != nil {
		return exitInvalid, err
	}
	doc := report.Compare(a, b)
	if c.json {
		return exitOK, json.NewEncoder(inv.stdout).Encode(doc)
	}
	printComparison(inv.stdout, doc)
	return exitOK, nil
}

// readClaims reads the claims.json at path, or in the directory path.
func readClaims(path string) (report.Published, error) {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		path = filepath.Join(path, "claims.json")
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return report.Published{}, fmt.Errorf("%s: no such file (give a publication, a figures directory or a claims.json)", path)
	}
	if err != nil {
		return report.Published{}, err
	}
	return report.ParseClaims(path, data)
}

func printComparison(w io.Writer, d report.Comparison) {
	for _, s := range []struct {
		name string
		side report.ComparedReport
	}{{"A", d.A}, {"B", d.B}} {
		fmt.Fprintf(w, "%s: %s (profile %s, %s; %d claims)\n", s.name, s.side.Path, s.side.Profile, s.side.ScaleWords(), s.side.Claims)
	}
	// The claim column is as wide as the longest ID (the paper profile's
	// fig2-nreinforce-const-between pushed a fixed 28 out of line).
	idW := len("claim")
	for _, c := range d.Claims {
		idW = max(idW, len(c.ID))
	}
	fmt.Fprintf(w, "\n%-*s %-14s %-14s\n", idW, "claim", "A", "B")
	for _, c := range d.Claims {
		mark := ""
		if !c.Same {
			mark = "  differs"
		}
		fmt.Fprintf(w, "%-*s %-14s %-14s%s\n", idW, c.ID, c.A.Verdict, c.B.Verdict, mark)
	}
	fmt.Fprintf(w, "\nthe same verdict in %d of the %d claims both test", d.Same, len(d.Claims))
	if len(d.Differ) == 0 {
		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "; %d differ:\n", len(d.Differ))
		for _, c := range d.Claims {
			if c.Same {
				continue
			}
			fmt.Fprintf(w, "  %s\n    A %s: %s\n    B %s: %s\n", c.ID, c.A.Verdict, c.A.Line(), c.B.Verdict, c.B.Line())
		}
	}
	for _, only := range []struct {
		name string
		ids  []string
	}{{"A", d.OnlyA}, {"B", d.OnlyB}} {
		if len(only.ids) > 0 {
			fmt.Fprintf(w, "only in %s: %s\n", only.name, strings.Join(only.ids, ", "))
		}
	}
}
