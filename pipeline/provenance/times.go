package provenance

import (
	"encoding/json"
	"slices"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/events"
)

// StageTime is the recorded task time of one stage: the time its tasks'
// current actions spent executing, summed over every run that worked on
// them (a resumed task counts each of its runs; work lost to a kill after
// the last checkpoint counts too, since it was spent).
type StageTime struct {
	Stage    string        `json:"stage"`
	Tasks    int           `json:"tasks"`
	Finished int           `json:"finished"` // tasks whose current action finished
	TaskTime time.Duration `json:"task_time"`
	Runs     []uint64      `json:"runs"` // the runs that executed these actions
}

// Times is the recorded time of a profile's current actions: per stage,
// in total, and the wall time of the runs that did the work.
type Times struct {
	Stages   []StageTime   `json:"stages"`
	Total    time.Duration `json:"total_task_time"`
	Runs     []uint64      `json:"runs"`
	RunsWall time.Duration `json:"runs_wall_time"`
}

// Times sums TaskTimes and measures the wall time of the runs behind them.
func (r *Record) Times() (*Times, error) {
	sts, err := r.TaskTimes()
	if err != nil {
		return nil, err
	}
	t := &Times{Stages: sts}
	for _, st := range sts {
		t.Total += st.TaskTime
		for _, run := range st.Runs {
			if !slices.Contains(t.Runs, run) {
				t.Runs = append(t.Runs, run)
			}
		}
	}
	slices.Sort(t.Runs)
	if t.RunsWall, err = r.RunsWallTime(t.Runs); err != nil {
		return nil, err
	}
	return t, nil
}

// TaskTimes sums, per stage in plan order, the recorded execution time of
// each task's current action (the one a run would cache or resume).
func (r *Record) TaskTimes() ([]StageTime, error) {
	xs, err := r.Explain()
	if err != nil {
		return nil, err
	}
	act := map[string]string{}
	for _, x := range xs {
		act[x.Task] = x.Action
	}
	out, at := byStage(r.eng.Plan.Tasks, func(stage string) StageTime { return StageTime{Stage: stage} })
	for _, t := range r.eng.Plan.Tasks {
		st := &out[at[t.Index]]
		st.Tasks++
		if act[t.Path] == "" {
			continue
		}
		evs, err := r.eng.Events.Events(t.Path)
		if err != nil {
			return nil, err
		}
		d, finished, runs := actionTime(evs, act[t.Path])
		st.TaskTime += d
		for _, r := range runs {
			if !slices.Contains(st.Runs, r) {
				st.Runs = append(st.Runs, r)
			}
		}
		if finished {
			st.Finished++
		}
	}
	for i := range out {
		slices.Sort(out[i].Runs)
	}
	return out, nil
}

// actionTime sums the durations of the runs of one action: each from its
// "started" event to its end state in the same run, or to the last timed
// event of that run (a run that was killed).
func actionTime(evs []events.Event, action string) (d time.Duration, finished bool, runs []uint64) {
	var run uint64
	var t0, last int64
	flush := func() {
		if t0 > 0 && last > t0 {
			d += time.Duration(last - t0)
		}
		t0, last = 0, 0
	}
	for _, ev := range evs {
		if ev.Action != action {
			continue
		}
		switch {
		case ev.Type == events.TypeState && ev.State == events.StateStarted:
			flush()
			run, t0, last = ev.Run, ev.Time, ev.Time
			if !slices.Contains(runs, run) {
				runs = append(runs, run)
			}
		case ev.Run == run && t0 > 0 && ev.Time > 0:
			last = max(last, ev.Time)
			if ev.Type == events.TypeState && ev.State == events.StateDone {
				finished = true
				if busy := busyNanos(ev); busy > 0 { // a cohort's member: its own share
					last = t0 + busy
				}
			}
			if ev.Type == events.TypeState && (ev.State == events.StateDone || ev.State == events.StateFailed || ev.State == events.StateInterrupted) {
				flush()
			}
		}
	}
	flush()
	return d, finished, runs
}

// RunsWallTime sums the wall time of the given runs: each from its start
// to its end event, or to its last timed event if it was killed.
func (r *Record) RunsWallTime(runs []uint64) (time.Duration, error) {
	var total time.Duration
	for _, run := range runs {
		evs, err := r.eng.Events.RunEvents(run)
		if err != nil {
			return 0, err
		}
		var t0, t1 int64
		for _, ev := range evs {
			if ev.Time == 0 {
				continue
			}
			if t0 == 0 || ev.Time < t0 {
				t0 = ev.Time
			}
			t1 = max(t1, ev.Time)
		}
		total += time.Duration(t1 - t0)
	}
	return total, nil
}

// byStage returns one value per stage in the order the plan first lists
// them, made by mk, and, by plan index, the position in it of every task's
// stage.
func byStage[T any](tasks []*dag.Task, mk func(stage string) T) ([]T, []int) {
	var out []T
	at := make([]int, len(tasks))
	idx := map[string]int{}
	for _, t := range tasks {
		i, ok := idx[t.Stage.Name]
		if !ok {
			i = len(out)
			idx[t.Stage.Name] = i
			out = append(out, mk(t.Stage.Name))
		}
		at[t.Index] = i
	}
	return out, at
}

// busyNanos returns the time a cohort's member ran without waiting for its
// turn, from its done event (0 for a task that ran alone).
func busyNanos(ev events.Event) int64 {
	var d pipeline.DoneData
	if len(ev.Data) == 0 || json.Unmarshal(ev.Data, &d) != nil {
		return 0
	}
	return d.BusyNanos
}
