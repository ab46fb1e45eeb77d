package provenance

import (
	"encoding/json"
	"strings"
	"time"

	"zorepro/pipeline/dag"
	"zorepro/pipeline/events"
	"zorepro/pipeline/task"
)

// StageEstimate is what a run would cost for one stage: the tasks it would
// execute, their samples (an upper bound from the tasks' budgets) and the
// time that would take on the run's workers.
type StageEstimate struct {
	Stage   string        `json:"stage"`
	Tasks   int           `json:"tasks"`
	Samples int64         `json:"samples"`
	Known   int           `json:"tasks_with_rate"` // tasks whose rate is known
	Wall    time.Duration `json:"wall,omitempty"`  // for those tasks, on Opt.Jobs workers
	Sources []string      `json:"rate_sources,omitempty"`
}

// Estimate sums, per stage, the cost of the tasks Explain says would run.
// A task's rate (samples per second of task time) comes from recorded runs
// of its group (its path without the seed coordinate), else of its stage,
// else from a component's task.RateHint; tasks with no known rate are
// counted but not timed. The wall time divides the work among Opt.Jobs.
func (r *Record) Estimate(xs []Explained) ([]StageEstimate, error) {
	run := map[string]bool{}
	for _, x := range xs {
		if x.Do == WouldRun {
			run[x.Task] = true
		}
	}
	group, stage, err := r.recordedRates()
	if err != nil {
		return nil, err
	}
	jobs := float64(max(r.eng.Opt.Jobs, 1))
	var out []StageEstimate
	idx := map[string]int{}
	for _, t := range r.eng.Plan.Tasks {
		i, ok := idx[t.Stage.Name]
		if !ok {
			i = len(out)
			idx[t.Stage.Name] = i
			out = append(out, StageEstimate{Stage: t.Stage.Name})
		}
		if !run[t.Path] {
			continue
		}
		se := &out[i]
		se.Tasks++
		c, ok := t.Runner.(task.Costed)
		if !ok {
			continue
		}
		cost := c.Cost()
		se.Samples += cost
		rate, source := group[groupOf(t)], "recorded runs of the same task group"
		if rate == 0 {
			rate, source = stage[t.Stage.Name], "recorded runs of the stage"
		}
		if rate == 0 {
			source = "component hint"
			for _, comp := range t.Runner.Components() {
				if h, ok := comp.(task.RateHint); ok {
					rate = h.SamplesPerSecond()
				}
			}
		}
		if rate <= 0 {
			continue
		}
		se.Known++
		se.Wall += time.Duration(float64(cost) / rate / jobs * float64(time.Second))
		if !contains(se.Sources, source) {
			se.Sources = append(se.Sources, source)
		}
	}
	for i := range out {
		out[i].Wall = out[i].Wall.Round(time.Second)
	}
	return out, nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// groupOf is a task's path without its seed coordinate: runs of one group
// differ only in their random streams, so they share a speed.
func groupOf(t *dag.Task) string {
	parts := strings.Split(t.Path, "/")
	out := parts[:0:0]
	for _, p := range parts {
		if !strings.HasPrefix(p, "seed=") {
			out = append(out, p)
		}
	}
	return strings.Join(out, "/")
}

// recordedRates returns samples per second of task time, per task group
// and per stage, over the plan's tasks with a finished recorded run. A
// run's samples are its last iteration's, or for tuning the sum of its
// trials'.
func (r *Record) recordedRates() (group, stage map[string]float64, err error) {
	gs, gt := map[string]float64{}, map[string]float64{}
	ss, st := map[string]float64{}, map[string]float64{}
	for _, t := range r.eng.Plan.Tasks {
		if _, ok := t.Runner.(task.Costed); !ok {
			continue
		}
		evs, err := r.eng.Events.Events(t.Path)
		if err != nil {
			return nil, nil, err
		}
		n, secs := lastRun(evs)
		if secs <= 0 {
			continue
		}
		if n == 0 {
			n = iterSamples(r.eng.Events, t.Path, evs)
		}
		if n <= 0 {
			continue
		}
		g := groupOf(t)
		gs[g] += n
		gt[g] += secs
		ss[t.Stage.Name] += n
		st[t.Stage.Name] += secs
	}
	group, stage = map[string]float64{}, map[string]float64{}
	for k, v := range gs {
		group[k] = v / gt[k]
	}
	for k, v := range ss {
		stage[k] = v / st[k]
	}
	return group, stage, nil
}

// lastRun returns, for the latest run in which the task went from started
// to done without a resume, the samples its trial notes report (0 if none)
// and its duration in seconds.
func lastRun(evs []events.Event) (samples, secs float64) {
	var run uint64
	var t0 int64
	var notes float64
	for _, ev := range evs {
		switch {
		case ev.Type == events.TypeState && ev.State == events.StateStarted:
			run, t0, notes = ev.Run, ev.Time, 0
		case ev.Type == events.TypeState && ev.State == events.StateResumed:
			t0 = 0 // partial runs say nothing about speed
		case ev.Type == events.TypeNote && ev.Run == run:
			var d struct {
				Kind  string `json:"kind"`
				Value struct {
					Samples float64 `json:"samples"`
				} `json:"value"`
			}
			if json.Unmarshal(ev.Data, &d) == nil && d.Kind == "trial" {
				notes += d.Value.Samples
			}
		case ev.Type == events.TypeState && ev.State == events.StateDone && ev.Run == run && t0 > 0:
			samples, secs = notes, float64(ev.Time-t0)/1e9
		}
	}
	return samples, secs
}

// iterSamples returns the last iteration's samples of the task's latest
// run with iterations.
func iterSamples(log *events.Log, task string, evs []events.Event) float64 {
	runs, err := log.IterRuns(task)
	if err != nil || len(runs) == 0 {
		return 0
	}
	its, err := log.Iterations(task, runs[len(runs)-1])
	if err != nil || len(its) == 0 {
		return 0
	}
	return float64(its[len(its)-1].Samples)
}
