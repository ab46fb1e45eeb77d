package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"zorepro/pipeline"
	"zorepro/pipeline/provenance"
	"zorepro/pipeline/task"
)

// replayCmd re-executes a task's latest recorded output and compares its
// events bit for bit.
type replayCmd struct {
	planFlags
	outputFlags
	scratch scratchFlags
	jobs    int
	until   int64
	events  bool
	task    string
}

func (c *replayCmd) doc() commandDoc {
	return commandDoc{name: "replay", args: "TASK", summary: "re-execute a task's latest recorded output and compare its events bit for bit"}
}

func (c *replayCmd) define(f *flagSet) {
	c.planFlags.define(f)
	c.outputFlags.define(f, false)
	jobsFlag(f, &c.jobs)
	f.Int64(&c.until, "until", "0", 0, "stop after this iteration and compare up to it (0: the whole task)")
	f.Bool(&c.events, "events", "print every compared event pair")
	c.scratch.define(f)
}

func (c *replayCmd) check(args []string) []string {
	p := oneArg("replay", "TASK", args)
	if p == nil {
		c.task = args[0]
	}
	return append(p, c.scratch.check("replay", c.storeDir)...)
}

func (c *replayCmd) run(inv *invocation) (int, error) {
	ctx, stdout := inv.ctx, inv.stdout
	eng, closeLog, err := c.openEngine(inv, inspect, pipeline.Options{Jobs: c.jobs}, nil)
	if err != nil {
		return exitInvalidOr(err), err
	}
	defer closeLog()
	sc, done, err := c.scratch.open()
	if err != nil {
		return exitFailed, err
	}
	defer done()
	rep, err := provenance.New(eng).Replay(ctx, c.task, c.until, sc)
	var idErr *provenance.IdentityError
	switch {
	case errors.As(err, &idErr):
		if c.json {
			json.NewEncoder(stdout).Encode(map[string]any{"profile": c.profile, "task": idErr.Task, "refused": true,
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
	if c.json {
		if err := json.NewEncoder(stdout).Encode(rep); err != nil {
			return exitFailed, err
		}
	} else {
		printReplay(stdout, rep, c.events)
	}
	if !rep.OK() {
		return exitFailed, fmt.Errorf("replay of %s differs from the recorded run", rep.Task)
	}
	return exitOK, nil
}

func printReplay(w io.Writer, r *provenance.ReplayReport, showEvents bool) {
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
	if showEvents {
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
