package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

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
	switch {
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

func cmdVerify(ctx context.Context, c *Config, stdout, _ io.Writer) (int, error) {
	eng, closeLog, err := openEngine(c, true)
	if err != nil {
		return exitInvalidOr(err), err
	}
	defer closeLog()
	eng.Opt.Jobs = c.Jobs
	cands, err := provenance.New(eng).VerifyCandidates()
	if err != nil {
		return exitFailed, err
	}
	if len(cands) == 0 {
		return exitInvalid, fmt.Errorf("no task of profile %s is cached in %s: nothing to verify", c.Profile, c.Store)
	}
	pick := cands
	if !c.All {
		pick = provenance.Sample(cands, c.Sample, c.SampleSeed)
	}
	sc, done, err := scratch(c)
	if err != nil {
		return exitFailed, err
	}
	defer done()
	if !c.JSON {
		what := "all"
		if !c.All {
			what = fmt.Sprintf("a sample (seed %d) of", c.SampleSeed)
		}
		fmt.Fprintf(stdout, "verifying %s %d of %d cached tasks by re-executing them into %s\n", what, len(pick), len(cands), sc.Dir)
	}
	enc := json.NewEncoder(stdout)
	vs, err := provenance.New(eng).Verify(ctx, pick, sc, func(v provenance.Verified) {
		if c.JSON {
			enc.Encode(v)
			return
		}
		switch {
		case v.Match:
			fmt.Fprintf(stdout, "ok       %s %s\n", v.Task, v.Output)
		case v.Error != "":
			fmt.Fprintf(stdout, "FAILED   %s: %s\n", v.Task, v.Error)
		default:
			fmt.Fprintf(stdout, "MISMATCH %s: recorded %s, recomputed %s\n", v.Task, v.Recorded, v.Output)
			for _, d := range v.Differ {
				fmt.Fprintf(stdout, "           %s\n", d)
			}
		}
	})
	bad := 0
	for _, v := range vs {
		if !v.Match {
			bad++
		}
	}
	if err != nil {
		return exitInterrupted, err
	}
	if !c.JSON {
		fmt.Fprintf(stdout, "%d of %d re-executed tasks reproduced their recorded outputs bit for bit\n", len(vs)-bad, len(vs))
	}
	if bad > 0 {
		return exitFailed, fmt.Errorf("verify: %d of %d tasks did not reproduce their recorded outputs", bad, len(vs))
	}
	return exitOK, nil
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
