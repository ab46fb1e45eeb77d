package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"zorepro/pipeline"
	"zorepro/pipeline/provenance"
)

// verifyCmd re-executes recorded tasks and compares their outputs with the
// recorded ones, or (--against) compares the store's figures with a
// published result.
type verifyCmd struct {
	planFlags
	outputFlags
	scratch scratchFlags
	jobs    int
	all     bool
	sample  int
	seed    uint64
	against string
	targets []string
}

func (c *verifyCmd) doc() commandDoc {
	return commandDoc{name: "verify", args: "[TARGET...]", summary: "re-execute recorded tasks and compare their outputs with the recorded ones",
		detail: "TARGETs (as for run) select their tasks and everything upstream; --all every task the store records\n" +
			"for the profile; --sample N a seeded pick of those. A task whose output or input is corrupt or missing,\n" +
			"or whose identity changed, is listed as not checkable with the reason; any such task, like a mismatch,\n" +
			"exits 1. --json prints one object; --jsonl streams one JSON object per task, then a summary object."}
}

func (c *verifyCmd) define(f *flagSet) {
	c.planFlags.define(f)
	c.outputFlags.define(f, true)
	jobsFlag(f, &c.jobs)
	f.Bool(&c.all, "all", "verify every recorded task")
	f.Int(&c.sample, "sample", 0, math.MinInt, "verify this many recorded tasks, picked with --seed")
	f.Uint64(&c.seed, "seed", "1", "seed of the --sample pick")
	c.scratch.define(f)
	f.String(&c.against, "against", "", "compare the store's figures with a published result's manifest (e.g. results/paper) instead of re-executing")
}

func (c *verifyCmd) check(args []string) []string {
	c.targets = args
	p := c.outputFlags.check("verify")
	if c.sample < 0 {
		p = append(p, fmt.Sprintf("--sample (or PIPELINE_SAMPLE): must be >= 1, got %d", c.sample))
	}
	switch {
	case c.all && c.sample > 0:
		p = append(p, "pipeline verify: give --all or --sample N, not both")
	case c.against != "" && (len(args) > 0 || c.all || c.sample > 0):
		p = append(p, "pipeline verify: --against compares figures; give it alone, without TARGETs, --all or --sample")
	case len(args) == 0 && !c.all && c.sample == 0 && c.against == "":
		p = append(p, "pipeline verify: give TARGETs, --all, --sample N or --against DIR")
	}
	return append(p, c.scratch.check("verify", c.storeDir)...)
}

// verifySummary is what verify --json prints, and --jsonl's last line.
type verifySummary struct {
	Profile    string                `json:"profile"`
	Recorded   int                   `json:"recorded"` // tasks with a recorded output
	Selected   int                   `json:"selected"`
	Sample     int                   `json:"sample,omitempty"`
	Seed       uint64                `json:"seed,omitempty"`
	Verdicts   map[string]int        `json:"verdicts"` // counts add up to Selected
	Reproduced int                   `json:"reproduced"`
	Tasks      []provenance.Verified `json:"tasks,omitempty"` // --json only
}

func (c *verifyCmd) run(inv *invocation) (int, error) {
	ctx, stdout := inv.ctx, inv.stdout
	eng, closeLog, err := c.openEngine(inv, inspect, pipeline.Options{Jobs: c.jobs}, c.targets)
	if err != nil {
		return exitInvalidOr(err), err
	}
	defer closeLog()
	if c.against != "" {
		return verifyAgainst(eng, c.against, c.json, stdout)
	}
	cands, err := provenance.New(eng).VerifyCandidates()
	if err != nil {
		return exitFailed, err
	}
	if len(cands) == 0 {
		return exitInvalid, fmt.Errorf("no task of profile %s is recorded in %s: nothing to verify", c.profile, c.storeDir)
	}
	pick := cands
	sum := verifySummary{Profile: c.profile, Recorded: len(cands), Verdicts: map[string]int{}}
	if c.sample > 0 {
		pick = provenance.Sample(cands, c.sample, c.seed)
		sum.Sample, sum.Seed = c.sample, c.seed
	}
	sum.Selected = len(pick)
	sc, done, err := c.scratch.open()
	if err != nil {
		return exitFailed, err
	}
	defer done()
	if !c.json && !c.jsonl {
		what := "all"
		if c.sample > 0 {
			what = fmt.Sprintf("a sample (seed %d) of", c.seed)
		}
		fmt.Fprintf(stdout, "verifying %s %d of %d recorded tasks by re-executing them into %s\n", what, len(pick), len(cands), sc.Dir)
	}
	enc := json.NewEncoder(stdout)
	vs, err := provenance.New(eng).Verify(ctx, pick, sc, func(v provenance.Verified) {
		switch {
		case c.jsonl:
			enc.Encode(v)
		case !c.json:
			printVerified(stdout, v)
		}
	})
	for _, v := range vs {
		sum.Verdicts[v.Verdict]++
	}
	sum.Reproduced = sum.Verdicts[provenance.Reproduced]
	if err != nil {
		return exitInterrupted, err
	}
	switch {
	case c.json:
		sum.Tasks = vs
		fallthrough
	case c.jsonl:
		if err := enc.Encode(sum); err != nil {
			return exitFailed, err
		}
	default:
		printVerifySummary(stdout, sum)
	}
	if bad := len(vs) - sum.Reproduced; bad > 0 {
		return exitFailed, fmt.Errorf("verify: %d of %d tasks were not reproduced or could not be checked", bad, len(vs))
	}
	return exitOK, nil
}

func printVerified(w io.Writer, v provenance.Verified) {
	switch v.Verdict {
	case provenance.Reproduced:
		fmt.Fprintf(w, "ok       %s %s\n", v.Task, v.Output)
	case provenance.Failed:
		fmt.Fprintf(w, "FAILED   %s: %s\n", v.Task, v.Error)
	case provenance.Differs:
		fmt.Fprintf(w, "MISMATCH %s: recorded %s, recomputed %s\n", v.Task, v.Recorded, v.Output)
		for _, d := range v.Differ {
			fmt.Fprintf(w, "           %s\n", d)
		}
	default:
		fmt.Fprintf(w, "UNCHECKED %s: %s: %s\n", v.Task, v.Verdict, v.Reason)
	}
}

// printVerifySummary prints the counts, which add up to the selection.
func printVerifySummary(w io.Writer, s verifySummary) {
	fmt.Fprintf(w, "%d of %d tasks reproduced their recorded outputs bit for bit", s.Reproduced, s.Selected)
	var others []string
	for _, k := range []string{provenance.Differs, provenance.Failed, provenance.Changed, provenance.CorruptOutput,
		provenance.MissingOutput, provenance.CorruptInput, provenance.MissingInput, provenance.CorruptRecord} {
		if n := s.Verdicts[k]; n > 0 {
			others = append(others, fmt.Sprintf("%d %s", n, k))
		}
	}
	if len(others) > 0 {
		fmt.Fprintf(w, "; not reproduced or not checkable: %s", strings.Join(others, ", "))
	}
	fmt.Fprintln(w)
}
