package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"zorepro/pipeline"
	"zorepro/pipeline/provenance"
	"zorepro/pipeline/task"
)

// scratch opens the scratch area of replay and verify: --scratch, or a
// temporary directory removed afterwards unless --keep.
func scratch(c *Config) (*provenance.Scratch, func(), error) {
	dir := c.Scratch
	temp := dir == ""
	if temp {
		d, err := os.MkdirTemp("", "pipeline-scratch-")
		if err != nil {
			return nil, nil, err
		}
		dir = d
	}
	sc, err := provenance.OpenScratch(dir)
	if err != nil {
		return nil, nil, err
	}
	return sc, func() {
		sc.Close()
		if temp && !c.Keep {
			os.RemoveAll(dir)
		}
	}, nil
}

func cmdReplay(ctx context.Context, c *Config, stdout, _ io.Writer) (int, error) {
	eng, closeLog, err := openEngine(c, true)
	if err != nil {
		return exitInvalidOr(err), err
	}
	defer closeLog()
	eng.Opt.Jobs = c.Jobs
	sc, done, err := scratch(c)
	if err != nil {
		return exitFailed, err
	}
	defer done()
	rep, err := provenance.New(eng).Replay(ctx, c.Args[0], c.Until, sc)
	var idErr *provenance.IdentityError
	switch {
	case errors.As(err, &idErr):
		if c.JSON {
			json.NewEncoder(stdout).Encode(map[string]any{"profile": c.Profile, "task": idErr.Task, "refused": true,
				"recorded_action": idErr.Recorded, "action": idErr.Current, "diff": idErr.Diff})
		} else {
			fmt.Fprintf(stdout, "replay %s refused: the recorded action %s is not what this binary and DAG would run (%s now)\n",
				idErr.Task, idErr.Recorded, idErr.Current)
			fmt.Fprintln(stdout, "changes since the recorded run (- recorded, + now):")
			for _, l := range idErr.Diff {
				fmt.Fprintln(stdout, "  "+l)
			}
		}
		return exitFailed, err
	case errors.Is(err, provenance.ErrUnknownTask) || errors.Is(err, provenance.ErrNotRecorded):
		return exitInvalid, err
	case errors.Is(err, pipeline.ErrInterrupted):
		return exitInterrupted, err
	case err != nil:
		return exitFailed, err
	}
	if c.JSON {
		if err := json.NewEncoder(stdout).Encode(rep); err != nil {
			return exitFailed, err
		}
	} else {
		printReplay(stdout, rep, c)
	}
	if !rep.OK() {
		return exitFailed, fmt.Errorf("replay of %s differs from the recorded run", rep.Task)
	}
	return exitOK, nil
}

func printReplay(w io.Writer, r *provenance.ReplayReport, c *Config) {
	fmt.Fprintf(w, "replay %s\n  recorded: action %s, run %d", r.Task, r.Action, r.RecordedRun)
	for _, s := range r.Segments {
		if s.Resumed {
			fmt.Fprintf(w, ", resumed in run %d after iteration %d", s.Run, s.ResumedAt)
		}
	}
	fmt.Fprintf(w, ", output %s\n", r.RecordedOutput)
	if r.Error != "" {
		fmt.Fprintf(w, "  re-execution failed: %s\n", r.Error)
	}
	scope := "all"
	if r.Until > 0 {
		scope = fmt.Sprintf("up to iteration %d", r.Until)
	}
	fmt.Fprintf(w, "  iteration events (%s): %d recorded, %d recomputed, %d equal bit for bit\n", scope, r.Recorded, r.Recomputed, r.Equal)
	if c.ShowEvents {
		for i := 0; i < max(len(r.RecordedEvents), len(r.RecomputedEvents)); i++ {
			var a, b *task.Iter
			if i < len(r.RecordedEvents) {
				a = &r.RecordedEvents[i]
			}
			if i < len(r.RecomputedEvents) {
				b = &r.RecomputedEvents[i]
			}
			switch {
			case a != nil && b != nil && provenance.SameIter(*a, *b):
				fmt.Fprintf(w, "    = %s\n", iterText(*a))
			default:
				if a != nil {
					fmt.Fprintf(w, "    - %s (recorded)\n", iterText(*a))
				}
				if b != nil {
					fmt.Fprintf(w, "    + %s (recomputed)\n", iterText(*b))
				}
			}
		}
	}
	if d := r.Diff; d != nil {
		fmt.Fprintf(w, "  first difference at event %d (%s):\n", d.Index, d.Field)
		if d.Recorded != nil {
			fmt.Fprintf(w, "    recorded:   %s\n", iterText(*d.Recorded))
		}
		if d.Recomputed != nil {
			fmt.Fprintf(w, "    recomputed: %s\n", iterText(*d.Recomputed))
		}
	}
	fmt.Fprintf(w, "  random streams: %s\n", map[bool]string{true: "same families", false: "DIFFERENT families"}[r.StreamsEqual])
	switch {
	case r.Stopped:
		fmt.Fprintf(w, "  stopped at iteration %d: outputs not compared\n", r.Until)
	case r.Output == r.RecordedOutput:
		fmt.Fprintf(w, "  output %s: identical\n", r.Output)
	case r.Output != "":
		fmt.Fprintf(w, "  output %s: DIFFERS from the recorded %s\n", r.Output, r.RecordedOutput)
	}
}

func iterText(it task.Iter) string {
	return fmt.Sprintf("iteration %d, samples %d, digest %016x%s", it.Iteration, it.Samples, it.Digest, metricsText(it.Metrics))
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

func cmdVerify(ctx context.Context, c *Config, stdout, _ io.Writer) (int, error) {
	eng, closeLog, err := openEngine(c, true)
	if err != nil {
		return exitInvalidOr(err), err
	}
	defer closeLog()
	if c.Against != "" {
		return verifyAgainst(c, eng, stdout)
	}
	eng.Opt.Jobs = c.Jobs
	cands, err := provenance.New(eng).VerifyCandidates()
	if err != nil {
		return exitFailed, err
	}
	if len(cands) == 0 {
		return exitInvalid, fmt.Errorf("no task of profile %s is recorded in %s: nothing to verify", c.Profile, c.Store)
	}
	pick := cands
	sum := verifySummary{Profile: c.Profile, Recorded: len(cands), Verdicts: map[string]int{}}
	if c.Sample > 0 {
		pick = provenance.Sample(cands, c.Sample, c.SampleSeed)
		sum.Sample, sum.Seed = c.Sample, c.SampleSeed
	}
	sum.Selected = len(pick)
	sc, done, err := scratch(c)
	if err != nil {
		return exitFailed, err
	}
	defer done()
	if !c.JSON && !c.JSONL {
		what := "all"
		if c.Sample > 0 {
			what = fmt.Sprintf("a sample (seed %d) of", c.SampleSeed)
		}
		fmt.Fprintf(stdout, "verifying %s %d of %d recorded tasks by re-executing them into %s\n", what, len(pick), len(cands), sc.Dir)
	}
	enc := json.NewEncoder(stdout)
	vs, err := provenance.New(eng).Verify(ctx, pick, sc, func(v provenance.Verified) {
		switch {
		case c.JSONL:
			enc.Encode(v)
		case !c.JSON:
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
	case c.JSON:
		sum.Tasks = vs
		fallthrough
	case c.JSONL:
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

func cmdGC(c *Config, stdout io.Writer) (int, error) {
	// Read-write: holding the log's lock keeps runs from adding references
	// while we collect. No plan: gc keeps what any recorded run references.
	eng, closeLog, err := openStore(c, false)
	if err != nil {
		return exitInvalidOr(err), err
	}
	defer closeLog()
	rep, err := provenance.New(eng).GC(provenance.GCOptions{DryRun: c.DryRun, Checkpoints: c.GCCheckpoints})
	if err != nil {
		return exitFailed, err
	}
	if c.JSON {
		return exitOK, json.NewEncoder(stdout).Encode(rep)
	}
	verb := "removed"
	if rep.DryRun {
		verb = "would remove"
	}
	fmt.Fprintf(stdout, "%d store entries, %d referenced by recorded runs\n", rep.Entries, rep.Referenced)
	fmt.Fprintf(stdout, "%s %d unreferenced entries (%s", verb, rep.Removed, bytesText(rep.RemovedBytes))
	if rep.Checkpoints > 0 {
		fmt.Fprintf(stdout, ", of them %d checkpoints of finished tasks", rep.Checkpoints)
	}
	fmt.Fprintf(stdout, ") and %d temp or quarantined files (%s)\n", rep.Leftovers, bytesText(rep.LeftoverBytes))
	if len(rep.Unreadable) > 0 {
		fmt.Fprintf(stdout, "%d recorded outputs are unreadable (their tasks will recompute): %v\n", len(rep.Unreadable), rep.Unreadable)
	}
	return exitOK, nil
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
