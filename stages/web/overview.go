package web

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"zorepro/pipeline/dag"
	"zorepro/pipeline/events"
	"zorepro/pipeline/provenance"
	"zorepro/pipeline/task"
)

// StageCounts is one stage's tasks by what the log says of them.
type StageCounts struct {
	Stage   string `json:"stage"`
	Tasks   int    `json:"tasks"`
	Done    int    `json:"done"` // done or cached
	Running int    `json:"running"`
	Failed  int    `json:"failed"`
	Pending int    `json:"pending"` // never run, skipped or interrupted
	// Left is the task time the latest prediction gives what is left of
	// the stage (one worker's, summed), of its LeftTimed tasks with a
	// known time out of LeftTasks (zero: none left, or no prediction yet);
	// LeftChanged of them ran before under another identity (this build's
	// code or parameters changed since).
	Left        time.Duration `json:"left,omitempty"`
	LeftTasks   int           `json:"left_tasks,omitempty"`
	LeftTimed   int           `json:"left_timed,omitempty"`
	LeftChanged int           `json:"left_changed,omitempty"`
}

// LeftText is the stage's task time left in words: "~2h05m" when every
// task left has a known time, "≥ ~2h05m" when some have none, "?" when
// none has, "" when nothing is left or nothing is predicted yet; tasks
// that ran before under another identity are counted (", 1 changed since
// it ran": a plot whose code this build changed).
func (c StageCounts) LeftText() string {
	var t string
	switch {
	case c.LeftTasks == 0:
		return ""
	case c.LeftTimed == 0:
		t = "?"
	case c.LeftTimed < c.LeftTasks:
		t = "≥ ~" + shortDur(c.Left)
	default:
		t = "~" + shortDur(c.Left)
	}
	switch {
	case c.LeftChanged == 1:
		t += ", 1 changed since it ran"
	case c.LeftChanged > 1:
		t += fmt.Sprintf(", %d changed since they ran", c.LeftChanged)
	}
	return t
}

// shortDur is d to the minute ("2h05m", "7m"), to the second under a
// minute.
func shortDur(d time.Duration) string {
	if d < time.Minute-time.Second/2 {
		return fmt.Sprintf("%ds", int(d.Round(time.Second)/time.Second))
	}
	m := int(d.Round(time.Minute) / time.Minute)
	if m < 60 {
		return fmt.Sprintf("%dm", m)
	}
	return fmt.Sprintf("%dh%02dm", m/60, m%60)
}

// Percent is the share of the stage's tasks done.
func (c StageCounts) Percent() string { return percent(float64(c.Done), float64(c.Tasks)) }

// Running is a task in progress with how far it got.
type Running struct {
	Task      string `json:"task"`
	Iteration int64  `json:"iteration"`
	Samples   int64  `json:"samples"`
	// Reported is whether the task has recorded an iteration yet (a
	// tuning trial records none: it says only its score at the end).
	Reported bool    `json:"reported"`
	Budget   float64 `json:"budget,omitempty"` // the samples it will consume at most, when its runner says
	Since    int64   `json:"since"`            // unix nanoseconds of its start
	// For is how long it has run (since Since, at Overview.AsOf or when
	// the overview was computed); Predicted is the dry run's time for the
	// task (zero where it has none, or before the first prediction): a
	// tuning trial, which reports no iteration, shows its progress by
	// these two.
	For       time.Duration `json:"for"`
	Predicted time.Duration `json:"predicted,omitempty"`
}

// Percent is the share of its budget's samples consumed ("" without a
// budget or before its first iteration's report).
func (r Running) Percent() string {
	if r.Budget <= 0 || !r.Reported {
		return ""
	}
	return percent(float64(r.Samples), r.Budget)
}

// percent is a as a whole percentage of b, rounded down: 100% only when
// all of b is reached (299 of 300 tasks is 99%, not a finished 100%).
func percent(a, b float64) string { return fmt.Sprintf("%.0f%%", math.Floor(100*a/max(b, 1))) }

// Failure is a failed task with its error.
type Failure struct {
	Task  string `json:"task"`
	Run   uint64 `json:"run"`
	Error string `json:"error"`
}

// Overview is the numbers the overview page shows.
type Overview struct {
	Profile    string        `json:"profile"`
	Tasks      int           `json:"tasks"`
	Done       int           `json:"done"`
	Stages     []StageCounts `json:"stages"`
	Run        uint64        `json:"run,omitempty"`
	InProgress bool          `json:"in_progress"`
	// Killed is whether the latest run ended without recording its end
	// (the store is at rest, its last run only started).
	Killed  bool          `json:"killed,omitempty"`
	Elapsed time.Duration `json:"elapsed,omitempty"` // of the run in progress, at AsOf
	// AsOf is when the state shown was written, when it is a running
	// run's snapshot (events.Log.AsOf; zero: now).
	AsOf time.Time `json:"as_of,omitzero"`
	// Remaining is the dry run's critical-path schedule of what is left
	// at the time Predicted (Options.Predict; zero until computed).
	Remaining time.Duration `json:"remaining,omitempty"`
	Workers   int           `json:"workers,omitempty"` // the schedule's workers
	Predicted time.Time     `json:"predicted,omitempty"`
	// RunPredicted is the running run's prediction of its wall time at
	// its start.
	RunPredicted time.Duration `json:"run_predicted,omitempty"`
	Running      []Running     `json:"running"`
	Failures     []Failure     `json:"failures"`
}

// maxListed bounds the failures listed.
const maxListed = 200

// overviewEvery is how long one computation of the overview serves every
// client: with the page reloading every second, a committed event shows
// within 1.5 s, and twenty watchers cost the run two computations a
// second, not twenty.
const overviewEvery = 500 * time.Millisecond

// overviewData returns the overview and its page, computed and rendered
// at most every overviewEvery: every client of that half second gets the
// same bytes.
func (s *Server) overviewData() (*Overview, []byte, error) {
	s.ovMu.Lock()
	defer s.ovMu.Unlock()
	if s.ov != nil && time.Since(s.ovAt) < overviewEvery {
		return s.ov, s.ovPage, nil
	}
	ov, err := s.computeOverview()
	if err != nil {
		return nil, nil, err
	}
	page, err := s.render(&view{tmpl: "overview.html", title: "Run overview", data: ov, refresh: ov.InProgress})
	if err != nil {
		return nil, nil, err
	}
	s.ov, s.ovPage, s.ovAt = ov, page, time.Now()
	return ov, page, nil
}

func (s *Server) computeOverview() (*Overview, error) {
	log := s.eng.Events
	states, err := log.LastStates()
	if err != nil {
		return nil, err
	}
	last := make(map[string]events.StateRecord, len(states))
	for _, st := range states {
		last[st.Task] = st
	}
	ov := &Overview{Profile: s.opt.Profile, RunPredicted: s.opt.Predicted, Tasks: len(s.eng.Plan.Tasks), Running: []Running{}, Failures: []Failure{}}
	run, inProgress, killed, err := log.Latest()
	if err != nil {
		return nil, err
	}
	ov.Run, ov.InProgress, ov.Killed = run, inProgress, killed
	// Durations run to the time of the state shown: a running run's
	// snapshot is up to --snapshot-interval old, and a task it shows
	// running may have finished since.
	now := time.Now()
	if at := log.AsOf(); !at.IsZero() {
		ov.AsOf, now = at, at
	}
	if inProgress {
		if start, ok, err := log.RunStart(run); err == nil && ok && start.Time > 0 {
			ov.Elapsed = now.Sub(time.Unix(0, start.Time))
		}
	}
	e := s.estimate()
	profiles := map[uint64]string{} // run -> its profile
	index := map[string]int{}
	for _, t := range s.eng.Plan.Tasks {
		i, ok := index[t.Stage.Name]
		if !ok {
			i = len(ov.Stages)
			index[t.Stage.Name] = i
			ov.Stages = append(ov.Stages, StageCounts{Stage: t.Stage.Name})
		}
		sc := &ov.Stages[i]
		sc.Tasks++
		st, ok := last[t.Path]
		switch {
		case !ok:
			sc.Pending++
		case (st.State == events.StateDone || st.State == events.StateCached) && s.doneElsewhere(e, st, profiles):
			sc.Pending++
		case st.State == events.StateDone || st.State == events.StateCached:
			sc.Done++
			ov.Done++
		case st.State == events.StateFailed:
			sc.Failed++
			if len(ov.Failures) < maxListed {
				ov.Failures = append(ov.Failures, Failure{Task: t.Path, Run: st.Run, Error: st.Error})
			}
		case (st.State == events.StateStarted || st.State == events.StateResumed) && inProgress && st.Run == run:
			sc.Running++
			ov.Running = append(ov.Running, s.running(t, st, now))
		default:
			sc.Pending++
		}
	}
	// A prediction made before the last tasks finished is stale once
	// nothing is left.
	if e != nil && ov.Done < ov.Tasks {
		ov.Remaining, ov.Workers, ov.Predicted = e.Remaining, e.Workers, e.at
		for _, sl := range e.Stages {
			if i, ok := index[sl.Stage]; ok {
				st := &ov.Stages[i]
				st.Left, st.LeftTasks, st.LeftTimed, st.LeftChanged = sl.TaskTime, sl.Tasks, sl.Timed, sl.Changed
			}
		}
		for i := range ov.Running {
			ov.Running[i].Predicted = e.Times[ov.Running[i].Task]
		}
	}
	return ov, nil
}

// doneElsewhere reports whether a task's done (or cached) state is
// another profile's: profiles share task paths (the paper profile's
// report is not the crossover profile's), so a state recorded by a run of
// another profile counts as this profile's only where the latest dry run
// (behind e) would reuse it. Without a dry run yet, every done state
// counts.
func (s *Server) doneElsewhere(e *estimate, st events.StateRecord, profiles map[uint64]string) bool {
	if e == nil || !e.rerun[st.Task] {
		return false
	}
	p, ok := profiles[st.Run]
	if !ok {
		if start, found, err := s.eng.Events.RunStart(st.Run); err == nil && found {
			var d struct {
				Profile string `json:"profile"`
			}
			json.Unmarshal(start.Data, &d)
			p = d.Profile
		}
		profiles[st.Run] = p
	}
	return p != "" && p != s.opt.Profile
}

// running reads how far a running task got by now: its latest iteration
// event.
func (s *Server) running(t *dag.Task, st events.StateRecord, now time.Time) Running {
	r := Running{Task: t.Path, Since: st.Time, For: now.Sub(time.Unix(0, st.Time))}
	if last, ok, err := s.eng.Events.LastIteration(t.Path, st.Run); err == nil && ok {
		r.Iteration, r.Samples, r.Reported = last.Iteration, last.Samples, true
	}
	r.Budget = budgetOf(t)
	return r
}

// costed is a task's runner that says how many samples it consumes at
// most (task.Costed): a training run's or a tuning trial's budget,
// whatever its parameter is called (online regret's rounds are "t").
type costed interface{ Cost() int64 }

// budgetOf is the samples a task will consume at most, 0 when its runner
// does not say.
func budgetOf(t *dag.Task) float64 {
	if c, ok := t.Runner.(costed); ok {
		return float64(c.Cost())
	}
	return 0
}

func (s *Server) overview(w http.ResponseWriter, r *http.Request) {
	_, page, err := s.overviewData()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(page)
}

func (s *Server) overviewJSON(w http.ResponseWriter, r *http.Request) {
	ov, _, err := s.overviewData()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(ov)
}

// estimate is a prediction of the remaining wall time, made at; rerun
// is the tasks its dry run would run.
type estimate struct {
	Prediction
	at    time.Time
	rerun map[string]bool
}

// estimateEvery is how often the remaining time is predicted again (a
// dry run of the paper profile takes seconds).
const estimateEvery = 30 * time.Second

// estimate returns the latest prediction (nil until the first is made)
// and starts a new one in the background when the latest is older than
// estimateEvery.
func (s *Server) estimate() *estimate {
	s.estMu.Lock()
	defer s.estMu.Unlock()
	if !s.predicting && time.Since(s.tried) > estimateEvery {
		s.predicting, s.tried = true, time.Now()
		go s.predict()
	}
	return s.est
}

// predict asks Options.Predict for the remaining wall time, from the
// shared dry run (its time is the prediction's).
func (s *Server) predict() {
	var e *estimate
	if s.opt.Predict != nil {
		if xs, at, err := s.explain(); err == nil {
			if p, err := s.opt.Predict(xs); err == nil {
				e = &estimate{Prediction: p, at: at, rerun: map[string]bool{}}
				for _, x := range xs {
					if x.Do == provenance.WouldRun {
						e.rerun[x.Task] = true
					}
				}
			}
		}
	}
	s.estMu.Lock()
	defer s.estMu.Unlock()
	s.predicting = false
	if e != nil {
		s.est = e
	}
}

// pathURL is the URL path of a task's page.
func pathURL(task string) string {
	parts := strings.Split(task, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return "/task/" + strings.Join(parts, "/")
}

func formatFloat(x float64) string { return task.FormatFloat(x) }
