package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/events"
	"zorepro/pipeline/provenance"
	"zorepro/stages/web"
)

// statusCmd prints the last recorded state of every task of the profile,
// or (--times) the recorded task time per stage and the predicted time
// left.
type statusCmd struct {
	planFlags
	outputFlags
	times bool
}

func (c *statusCmd) doc() commandDoc {
	return commandDoc{name: "status", summary: "the last recorded state of every task (--times: task time per stage, and the time left)"}
}

func (c *statusCmd) define(f *flagSet) {
	c.planFlags.define(f)
	c.outputFlags.define(f, false)
	f.Bool(&c.times, "times", "print the recorded task time per stage and the predicted time left instead of the task list")
}

func (c *statusCmd) check(args []string) []string { return noArgs("status", args) }

func (c *statusCmd) run(inv *invocation) (int, error) {
	return c.reading(inv, func(eng *pipeline.Engine) (int, error) { return c.status(eng, inv.stdout) })
}

func (c *statusCmd) status(eng *pipeline.Engine, stdout io.Writer) (int, error) {
	if c.times {
		return c.statusTimes(eng, stdout)
	}
	states, err := eng.Events.LastStates()
	if err != nil {
		return exitFailed, err
	}
	last := map[string]events.StateRecord{}
	for _, s := range states {
		last[s.Task] = s
	}
	doc := statusDoc{Profile: c.profile, Store: c.storeDir, Total: len(eng.Plan.Tasks), Counts: map[string]int{}}
	profiles := map[uint64]string{} // run -> its profile
	for _, t := range eng.Plan.Tasks {
		ts := taskStatus{Task: t.Path, State: "never-run"}
		if s, ok := last[t.Path]; ok {
			ts.State, ts.Run, ts.Error = s.State, s.Run, s.Error
			p, seen := profiles[s.Run]
			if !seen {
				if p, err = profileOf(eng.Events, s.Run); err != nil {
					return exitFailed, err
				}
				profiles[s.Run] = p
			}
			if p != "" && p != c.profile {
				// Profiles share task paths: this state is of another
				// profile's task (`why` tells whether it is this one's).
				ts.Profile = p
				doc.OtherProfile++
			}
		}
		doc.Counts[ts.State]++
		doc.Tasks = append(doc.Tasks, ts)
	}
	if run, _, killed, err := eng.Events.Latest(); err == nil && killed {
		doc.KilledRun = run
	}
	if c.json {
		return exitOK, json.NewEncoder(stdout).Encode(doc)
	}
	for _, ts := range doc.Tasks {
		line := fmt.Sprintf("%-11s %s", ts.State, ts.Task)
		if ts.Run != 0 {
			run := fmt.Sprintf("run %d", ts.Run)
			if ts.Profile != "" {
				run += ", profile " + ts.Profile
			}
			line += "  (" + run + ")"
			if ts.Error != "" {
				line += ": " + ts.Error
			}
		}
		fmt.Fprintln(stdout, line)
	}
	var parts []string
	for _, k := range []string{"done", "cached", "failed", "skipped", "interrupted", "started", "never-run"} {
		if doc.Counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", doc.Counts[k], k))
		}
	}
	fmt.Fprintf(stdout, "%d tasks of profile %s: %s\n", doc.Total, doc.Profile, strings.Join(parts, ", "))
	if doc.KilledRun != 0 {
		fmt.Fprintf(stdout, "run %d recorded its start and no end, and no run holds the store: it was killed (or ended with its session); the command that started it resumes it\n", doc.KilledRun)
	}
	if doc.OtherProfile > 0 {
		fmt.Fprintf(stdout, "%d of these states were recorded by runs of another profile (the task paths are shared; `pipeline why TASK` tells whether a task is cached for this one)\n", doc.OtherProfile)
	}
	return exitOK, nil
}

// statusDoc is what status --json prints.
type statusDoc struct {
	Profile string         `json:"profile"`
	Store   string         `json:"store"`
	Tasks   []taskStatus   `json:"tasks"`
	Total   int            `json:"total"`
	Counts  map[string]int `json:"counts"` // by state; they add up to Total
	// OtherProfile counts the tasks whose last state was recorded by a run
	// of another profile.
	OtherProfile int `json:"other_profile"`
	// KilledRun is the latest run when it recorded its start and no end
	// and no run holds the store: it was killed (or ended with its
	// session), and the tasks it had started show "started".
	KilledRun uint64 `json:"killed_run,omitempty"`
}

type taskStatus struct {
	Task  string `json:"task"`
	State string `json:"state"` // an events state, or "never-run"
	Run   uint64 `json:"run,omitempty"`
	// Profile is the profile of Run when it is not the one shown.
	Profile string `json:"profile,omitempty"`
	Error   string `json:"error,omitempty"`
}

// statusTimes prints the recorded task time of each stage's current
// actions: how long the profile's computation took, however many runs and
// sessions it was spread over; and what is left, as the dry run predicts
// it (the task time left per stage, as serve's overview gives it, and the
// wall time on the latest run's workers).
func (c *statusCmd) statusTimes(eng *pipeline.Engine, stdout io.Writer) (int, error) {
	rec := provenance.New(eng)
	tm, err := rec.Times()
	if err != nil {
		return exitFailed, err
	}
	// What is left is a prediction: without one (a dry run that cannot
	// be made) the recorded times are still worth printing.
	workers := latestJobs(eng.Events)
	sched, perr := func() (*provenance.Schedule, error) {
		xs, err := rec.Explain()
		if err != nil {
			return nil, err
		}
		return predictRemaining(eng, xs, workers)
	}()
	if c.json {
		doc := map[string]any{"profile": c.profile, "stages": tm.Stages,
			"total_task_time": tm.Total, "runs": tm.Runs, "runs_wall_time": tm.RunsWall}
		if perr != nil {
			doc["left_error"] = perr.Error()
		} else {
			doc["left"], doc["left_untimed"], doc["left_wall"], doc["left_workers"] = sched.Stages, sched.Unknown, sched.Walls[0].Wall, workers
		}
		return exitOK, json.NewEncoder(stdout).Encode(doc)
	}
	left := map[string]provenance.StageLeft{}
	if perr == nil {
		for _, sl := range sched.Stages {
			left[sl.Stage] = sl
		}
	}
	fmt.Fprintf(stdout, "%-24s %8s %12s  %-14s %s\n", "stage", "finished", "task time", "runs", "left")
	for _, st := range tm.Stages {
		sl := left[st.Stage]
		l := web.StageCounts{Left: sl.TaskTime, LeftTasks: sl.Tasks, LeftTimed: sl.Timed, LeftChanged: sl.Changed}.LeftText()
		fmt.Fprintf(stdout, "%-24s %4d/%-4d %12s  %-14s %s\n", st.Stage, st.Finished, st.Tasks, st.TaskTime.Round(time.Second), fmt.Sprint(st.Runs), l)
	}
	fmt.Fprintf(stdout, "total task time %s: each task's own wall time, summed (tasks overlap when they run side by side)\n", tm.Total.Round(time.Second))
	fmt.Fprintf(stdout, "wall time of the %d runs %v that did this work: %s\n", len(tm.Runs), tm.Runs, tm.RunsWall.Round(time.Second))
	switch {
	case perr != nil:
		fmt.Fprintf(stdout, "left: no prediction (%v)\n", perr)
		return exitOK, nil
	case sched.Tasks == 0:
		fmt.Fprintln(stdout, "left: nothing; every task is recorded under its current identity")
		return exitOK, nil
	}
	untimed := ""
	if sched.Unknown > 0 {
		untimed = fmt.Sprintf(", %d of them without a known time, counted as none", sched.Unknown)
	}
	fmt.Fprintf(stdout, "left: %d tasks, ~%s of task time (one worker's; \"left\" per stage), ~%s of wall time on %d workers as the engine schedules them%s (run --dry-run: where each estimate comes from)\n",
		sched.Tasks, sched.TaskTime.Round(time.Second), sched.Walls[0].Wall.Round(time.Second), workers, untimed)
	return exitOK, nil
}
