package provenance

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/events"
	"zorepro/pipeline/task"
)

// StageEstimate is what a run would cost for one stage: the tasks it would
// execute, their samples (an upper bound from the tasks' budgets) and the
// time that would take.
type StageEstimate struct {
	Stage   string `json:"stage"`
	Tasks   int    `json:"tasks"`
	Samples int64  `json:"samples"`
	Known   int    `json:"tasks_with_rate"` // tasks whose rate or recorded time is known
	// TaskTime is the summed time of those tasks, one worker each; Wall
	// spreads it over the run's workers.
	TaskTime time.Duration `json:"task_time,omitempty"`
	Wall     time.Duration `json:"wall,omitempty"`
	Sources  []string      `json:"rate_sources,omitempty"`
	// Unmatched counts the tasks split into parts (tuning grids'
	// selections) that neither their own record nor a recorded split task
	// of the same method and instance times: one whose grid extends beyond
	// an edge runs the new trials itself, longer than predicted.
	Unmatched int `json:"split_tasks_unmatched,omitempty"`
}

// Rate sources, from the best evidence to the least.
const (
	sourceGroup  = "recorded runs of the same task group"
	sourcePeer   = "recorded runs of the same method and size in another stage"
	sourcePoint  = "recorded runs of the same method, instance and grid point at other sizes"
	sourceNamed  = "recorded runs of the same method and instance at other sizes"
	sourceNamedX = "recorded runs of the same method and instance at other sizes in another stage"
	sourceKind   = "recorded runs of the same method at other sizes"
	sourceMethod = "recorded runs of the same method at other sizes in another stage"
	sourceStage  = "recorded runs of the stage"
	sourceHint   = "component hint"
)

// Estimate sums, per stage, the cost of the tasks Explain says would run.
//
// A task costs its budget in samples, weighted by its size (a component's
// task.SampleCoster: the time of one sample at this d relative to a
// reference d), divided by a recorded rate, plus the recorded time the
// task spends outside its iterations (set-up, tear-down). Rates are taken
// from the span between a recorded task's first and last iteration, so
// that a short run's set-up does not pass for slowness; a task without
// iterations (a tuning grid) is timed whole. The rate comes from recorded
// runs of, in this order of preference: the task's group (its path without
// the seed coordinate) or a group with the same coordinates and components
// in another stage (tuning trials are training runs); for a tuning
// trial, the same grid point of the same method and instance at other
// sizes (pointKey); the same components
// and named coordinates (one method on one body) at other sizes, in the
// same stage or another; the same components at other sizes, in the same
// stage or another; the stage; a component's
// task.RateHint. Within each of these tiers, timed iteration spans beat
// whole-task times, then more recorded time wins. A stage nothing recorded
// times, in a profile with a reference run (prior.json: smoke and quick),
// takes that run's mean task time, before any component hint. A task
// without a budget (an evaluation, a plot, a tuning grid's selection) is
// timed by recorded whole-task times as taskTimes says. Tasks with no
// known rate or time are counted but not timed.
func (r *Record) Estimate(xs []Explained) ([]StageEstimate, error) {
	tt, err := r.taskTimes(xs)
	if err != nil {
		return nil, err
	}
	jobs := time.Duration(max(r.eng.Opt.Jobs, 1))
	out, at := byStage(r.eng.Plan.Tasks, func(stage string) StageEstimate { return StageEstimate{Stage: stage} })
	for _, t := range r.eng.Plan.Tasks {
		x := tt[t.Index]
		if !x.run {
			continue
		}
		se := &out[at[t.Index]]
		se.Tasks++
		se.Samples += x.samples
		if unmatched(t, x) {
			se.Unmatched++
		}
		if x.source == "" {
			continue
		}
		se.Known++
		se.TaskTime += time.Duration(x.secs * float64(time.Second))
		if !slices.Contains(se.Sources, x.source) {
			se.Sources = append(se.Sources, x.source)
		}
	}
	for i := range out {
		out[i].Wall = (out[i].TaskTime / jobs).Round(time.Second)
		out[i].TaskTime = out[i].TaskTime.Round(time.Second)
	}
	return out, nil
}

// taskTime is one planned task's estimate: whether it would run, its
// samples (costed tasks) and its predicted seconds, with the rate's source
// ("" when unknown).
type taskTime struct {
	run     bool
	samples int64
	secs    float64
	source  string
	own     bool // timed by its own group's records
}

// sourceRecorded times a task without a sample budget (evaluation,
// generation, plotting, a tuning selection) by the recorded runs of its
// group or stage.
const sourceRecorded = "recorded whole-task times"

// sourceParts and sourcePartsStage time a task split into parts (a
// tuning grid's selection) by its parts' predicted time, scaled as the
// recorded split tasks of the same method and instance, or else of its
// stage, scale: a selection that extends its grid beyond an edge runs the
// new trials itself, each as long as one of its parts.
const (
	sourceParts      = "recorded split tasks of the same method and instance, per part"
	sourcePartsStage = "recorded split tasks of the stage, per part"
)

// taskTimes predicts every planned task's time, by plan index. Costed
// tasks are predicted from rates as Estimate says; the others as
// wholeTime says, else from the profile's reference run.
func (r *Record) taskTimes(xs []Explained) ([]taskTime, error) {
	run := map[string]bool{}
	for _, x := range xs {
		if x.Do == WouldRun {
			run[x.Task] = true
		}
	}
	sp, err := r.recordedSpeeds()
	if err != nil {
		return nil, err
	}
	whole, err := r.wholeTimes()
	if err != nil {
		return nil, err
	}
	ratios := partRatios(r.eng.Plan.Tasks, whole.secs, sp.secs)
	out := make([]taskTime, len(r.eng.Plan.Tasks))
	for _, t := range r.eng.Plan.Tasks {
		x := &out[t.Index]
		if x.run = run[t.Path]; !x.run {
			continue
		}
		if c, ok := t.Runner.(task.Costed); ok {
			x.samples = c.Cost()
			x.secs, x.source = sp.predict(t, float64(x.samples)*sampleCost(t))
			continue
		}
		x.secs, x.source = wholeTime(t, whole, ratios, sp)
		_, x.own = whole.mean["group "+groupOf(t)]
		if x.source == "" {
			if secs := r.priorTime(t); secs > 0 {
				x.secs, x.source = secs, sourcePrior
			}
		}
	}
	return out, nil
}

// priorTime is t's time in the reference run of the plan's profile, for
// a stage the store has recorded nothing of (0: no reference).
func (r *Record) priorTime(t *dag.Task) float64 {
	return loadPrior().perTask(r.eng.Opt.Profile, t)
}

// meanTime accumulates recorded task times.
type meanTime struct{ sum, n float64 }

func (m meanTime) mean() float64 { return m.sum / m.n }

// unmatched reports whether t is a split task that x, its predicted
// time, takes from neither its own record nor the split tasks of its
// method and instance (StageEstimate.Unmatched).
func unmatched(t *dag.Task, x taskTime) bool {
	return len(t.Parts) > 0 && !x.own && x.source != sourceParts
}

// wholeTime predicts the time of t, a task without a sample budget, from
// recorded runs: the mean of its group's; else, for a task split into
// parts, the ratio (partRatios) of the same method and instance's, else
// of its stage's, times the mean predicted time of its parts; else the
// mean of its stage's. The source is "" when none of them is recorded.
func wholeTime(t *dag.Task, whole wholeTimes, ratios map[string]float64, sp *speeds) (float64, string) {
	if m, ok := whole.mean["group "+groupOf(t)]; ok {
		return m.mean(), sourceRecorded
	}
	if len(t.Parts) > 0 {
		for _, k := range []struct{ key, src string }{{"named " + namedKey(t), sourceParts}, {"stage " + t.Stage.Name, sourcePartsStage}} {
			if ratio, ok := ratios[k.key]; ok {
				if secs, ok := sp.meanPart(t); ok {
					return ratio * secs, k.src
				}
				break
			}
		}
	}
	if m, ok := whole.mean["stage "+t.Stage.Name]; ok {
		return m.mean(), sourceRecorded
	}
	return 0, ""
}

// wholeTimes is the recorded time of the planned tasks without a sample
// budget: the mean by "group <group>" and "stage <stage>", and each
// task's by plan index.
type wholeTimes struct {
	mean map[string]meanTime
	secs map[int]float64
}

// wholeTimes collects the recorded time of every planned task without a
// sample budget.
func (r *Record) wholeTimes() (wholeTimes, error) {
	out := wholeTimes{mean: map[string]meanTime{}, secs: map[int]float64{}}
	err := r.eachLastRun(false, func(t *dag.Task, lr recordedRun) {
		out.secs[t.Index] = lr.secs
		for _, key := range []string{"group " + groupOf(t), "stage " + t.Stage.Name} {
			m := out.mean[key]
			m.sum += lr.secs
			m.n++
			out.mean[key] = m
		}
	})
	return out, err
}

// partRatios is how long recorded split tasks took against their parts,
// by "named <namedKey>" (one method on one instance in one stage, at every
// size) and by "stage <stage>": the summed recorded time of every task
// with parts over the summed mean recorded time of its parts (those with
// a recorded run). A tuning grid's selection that extends the grid beyond
// an edge (stages/tune's "extend") runs the new trials itself, so its
// time is some number of its own trials, which a mean over the stage's
// selections (most of them at other sizes) would not give: the ratio of
// selections that extended by two rounds on three seeds is about 6. Keys
// with no such record are left out. whole and parts are recorded times
// by plan index.
func partRatios(tasks []*dag.Task, whole, parts map[int]float64) map[string]float64 {
	type sums struct{ whole, parts float64 }
	by := map[string]*sums{}
	add := func(key string, whole, parts float64) {
		if by[key] == nil {
			by[key] = &sums{}
		}
		by[key].whole += whole
		by[key].parts += parts
	}
	for _, t := range tasks {
		secs, ok := whole[t.Index]
		if !ok || len(t.Parts) == 0 {
			continue
		}
		var sum float64
		n := 0
		for _, p := range t.Parts {
			if s, ok := parts[p.Index]; ok {
				sum += s
				n++
			}
		}
		if n == 0 || sum <= 0 {
			continue
		}
		add("named "+namedKey(t), secs, sum/float64(n))
		add("stage "+t.Stage.Name, secs, sum/float64(n))
	}
	out := map[string]float64{}
	for key, s := range by {
		out[key] = s.whole / s.parts
	}
	return out
}

// eachLastRun calls fn with every planned task that has a finished
// recorded run (lastRun), of the costed tasks or of the others.
func (r *Record) eachLastRun(costed bool, fn func(t *dag.Task, lr recordedRun)) error {
	for _, t := range r.eng.Plan.Tasks {
		if _, ok := t.Runner.(task.Costed); ok != costed {
			continue
		}
		evs, err := r.eng.Events.Events(t.Path)
		if err != nil {
			return err
		}
		if lr := lastRun(evs); lr.secs > 0 {
			fn(t, lr)
		}
	}
	return nil
}

// sampleCost is the relative time of one of t's samples at its size.
func sampleCost(t *dag.Task) float64 {
	for _, comp := range t.Runner.Components() {
		if sc, ok := comp.(task.SampleCoster); ok {
			if w := sc.SampleCost(t.Coord); w > 0 {
				return w
			}
		}
	}
	return 1
}

// speed is what recorded runs say about a set of tasks: per task, its
// work (samples weighted by sampleCost) and time, and where known the
// work and time between its first and last iteration.
type speed struct {
	work, secs         []float64
	spanWork, spanSecs float64
}

func (s *speed) add(o speed) {
	s.work = append(s.work, o.work...)
	s.secs = append(s.secs, o.secs...)
	s.spanWork += o.spanWork
	s.spanSecs += o.spanSecs
}

// better reports whether s is better evidence than o: timed iteration
// spans beat whole-task times (which include set-up), then more recorded
// time wins.
func (s *speed) better(o *speed) bool {
	if (s.spanSecs > 0) != (o.spanSecs > 0) {
		return s.spanSecs > 0
	}
	return s.recorded() > o.recorded()
}

func (s *speed) recorded() float64 {
	t := 0.0
	for _, x := range s.secs {
		t += x
	}
	return t
}

// seconds predicts the time of a task doing work as a + b·work: b from the
// iteration spans where there are any (a the mean time outside them),
// else a least-squares line through the tasks when their work differs,
// else the plain ratio (a = 0).
func (s speed) seconds(work float64) float64 {
	n := float64(len(s.work))
	var sw, st, sww, swt float64
	for i, w := range s.work {
		sw += w
		st += s.secs[i]
		sww += w * w
		swt += w * s.secs[i]
	}
	var a, b float64
	switch den := n*sww - sw*sw; {
	case s.spanWork > 0 && s.spanSecs > 0:
		b = s.spanSecs / s.spanWork
		a = max(0, (st-b*sw)/n)
	case n >= 2 && den > 1e-9*sww*n:
		b = (n*swt - sw*st) / den
		a = (st - b*sw) / n
		if b <= 0 || a < 0 {
			a, b = 0, st/sw
		}
	default:
		b = st / sw
	}
	return a + b*work
}

// speeds indexes recorded speeds by group, by group coordinates and
// components (peers across stages), by stage and components, and by stage.
type speeds struct {
	group, peer, point, named, namedX, kind, method, stage map[string]*speed
	// secs is each recorded task's time, by plan index.
	secs map[int]float64
	// prior is a task's time in the profile's reference run (0: none);
	// hint a component's rate. Both serve only where nothing is recorded.
	prior func(t *dag.Task) float64
	hint  func(t *dag.Task) float64
}

func (sp *speeds) predict(t *dag.Task, work float64) (float64, string) {
	type cand struct {
		s   *speed
		src string
	}
	tiers := [][]cand{
		{{sp.group[groupOf(t)], sourceGroup}, {sp.peer[peerKey(t)], sourcePeer}},
		{{sp.point[pointKey(t)], sourcePoint}},
		{{sp.named[namedKey(t)], sourceNamed}, {sp.namedX[namedAcross(t)], sourceNamedX}},
		{{sp.kind[kindKey(t)], sourceKind}, {sp.method[componentsOf(t)], sourceMethod}},
		{{sp.stage[t.Stage.Name], sourceStage}},
	}
	for _, tier := range tiers {
		var best *cand
		for i := range tier {
			if c := &tier[i]; c.s != nil && (best == nil || c.s.better(best.s)) {
				best = c
			}
		}
		if best != nil {
			return best.s.seconds(work), best.src
		}
	}
	if secs := sp.prior(t); secs > 0 {
		return secs, sourcePrior
	}
	if rate := sp.hint(t); rate > 0 {
		return work / rate, sourceHint
	}
	return 0, ""
}

// meanPart is the mean predicted time of t's parts (those with a sample
// budget and a known rate), whether or not they would run.
func (sp *speeds) meanPart(t *dag.Task) (float64, bool) {
	var sum float64
	n := 0
	for _, p := range t.Parts {
		c, ok := p.Runner.(task.Costed)
		if !ok {
			continue
		}
		if secs, src := sp.predict(p, float64(c.Cost())*sampleCost(p)); src != "" {
			sum += secs
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

func rateHint(t *dag.Task) float64 {
	for _, comp := range t.Runner.Components() {
		if h, ok := comp.(task.RateHint); ok {
			return h.SamplesPerSecond()
		}
	}
	return 0
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

// componentsOf names the Go types of a task's components.
func componentsOf(t *dag.Task) string {
	var names []string
	for _, c := range t.Runner.Components() {
		names = append(names, fmt.Sprintf("%T", c))
	}
	return strings.Join(names, ",")
}

// peerKey identifies tasks that do the same work in any stage: the same
// coordinates (but the seed) and the same components.
func peerKey(t *dag.Task) string {
	var cs []string
	for _, c := range t.Coords {
		if c.Axis != "seed" {
			cs = append(cs, c.Axis+"="+c.Value)
		}
	}
	slices.Sort(cs)
	return strings.Join(cs, "/") + " " + componentsOf(t)
}

// namedAcross identifies tasks that run one method on one named instance
// in any stage, at any size: the same components and the same named
// coordinates (method=exact, name=ant: those whose values are not
// numbers), whatever their numeric ones (horizon, step size, seed). Bodies
// of one Go type differ tenfold in speed (Swimmer's steps against
// Humanoid's), so a rate fitted through all of them would time none.
func namedAcross(t *dag.Task) string {
	var cs []string
	for _, c := range t.Coords {
		if _, err := strconv.ParseFloat(c.Value, 64); err != nil {
			cs = append(cs, c.Axis+"="+c.Value)
		}
	}
	slices.Sort(cs)
	return componentsOf(t) + " " + strings.Join(cs, "/")
}

// pointKey identifies the parts of one stage (tuning trials) that run one
// method on one named instance at one grid point, whatever their size:
// namedKey and the part's own coordinates but the seed (alpha=0.01). A
// step size that makes the policy diverge can make every step of a body
// several times slower (Ant's ARS trials at H = 21: 31 s at α = 10⁻⁴, 174
// s at α = 10⁻²), which a line through all the grid's points would spread
// over all of them. "" for a task that is not a part.
func pointKey(t *dag.Task) string {
	if t.Parent == nil {
		return ""
	}
	var cs []string
	for _, c := range t.Coords {
		if c.Axis != "seed" && !slices.Contains(t.Parent.Coords, c) {
			cs = append(cs, c.Axis+"="+c.Value)
		}
	}
	slices.Sort(cs)
	return namedKey(t) + " " + strings.Join(cs, "/")
}

// namedKey is namedAcross within one stage.
func namedKey(t *dag.Task) string { return t.Stage.Name + " " + namedAcross(t) }

// kindKey identifies tasks of one stage with the same components (one
// method), whatever their size.
func kindKey(t *dag.Task) string { return t.Stage.Name + " " + componentsOf(t) }

// recordedSpeeds collects the speeds of the plan's costed tasks with a
// finished recorded run.
func (r *Record) recordedSpeeds() (*speeds, error) {
	sp := newSpeeds(r.priorTime, rateHint)
	err := r.eachLastRun(true, func(t *dag.Task, lr recordedRun) {
		n := lr.samples
		if n == 0 {
			n = iterSamples(r.eng.Events, t.Path)
		}
		if n <= 0 {
			return
		}
		sp.secs[t.Index] = lr.secs
		w := sampleCost(t)
		s := speed{work: []float64{n * w}, secs: []float64{lr.secs}}
		if lr.span.Samples > 0 && lr.span.Nanos > 0 && float64(lr.span.Samples) <= n {
			s.spanWork, s.spanSecs = float64(lr.span.Samples)*w, float64(lr.span.Nanos)/1e9
		}
		sp.record(t, s)
	})
	return sp, err
}

// newSpeeds returns speeds with nothing recorded, whose tasks fall back on
// prior and then hint.
func newSpeeds(prior, hint func(t *dag.Task) float64) *speeds {
	return &speeds{group: map[string]*speed{}, peer: map[string]*speed{}, point: map[string]*speed{}, named: map[string]*speed{}, namedX: map[string]*speed{},
		kind: map[string]*speed{}, method: map[string]*speed{}, stage: map[string]*speed{}, secs: map[int]float64{}, prior: prior, hint: hint}
}

// record adds s, what a recorded run of t says, under each of t's keys.
func (sp *speeds) record(t *dag.Task, s speed) {
	for _, k := range []struct {
		m   map[string]*speed
		key string
	}{{sp.group, groupOf(t)}, {sp.peer, peerKey(t)}, {sp.point, pointKey(t)}, {sp.named, namedKey(t)}, {sp.namedX, namedAcross(t)},
		{sp.kind, kindKey(t)}, {sp.method, componentsOf(t)}, {sp.stage, t.Stage.Name}} {
		if k.key == "" {
			continue
		}
		if k.m[k.key] == nil {
			k.m[k.key] = &speed{}
		}
		k.m[k.key].add(s)
	}
}

// recordedRun is a task's latest uninterrupted run: the samples its trial
// notes report (0 if none), its duration and its iteration span.
type recordedRun struct {
	samples, secs float64
	span          pipeline.SpanData
}

// lastRun returns the task's latest run that went from started to done
// without a resume.
func lastRun(evs []events.Event) recordedRun {
	var out recordedRun
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
			out = recordedRun{samples: notes, secs: float64(ev.Time-t0) / 1e9}
			var d pipeline.DoneData
			if len(ev.Data) > 0 && json.Unmarshal(ev.Data, &d) == nil {
				if d.Span != nil {
					out.span = *d.Span
				}
				if d.BusyNanos > 0 { // a cohort's member: its own share of the time
					out.secs = float64(d.BusyNanos) / 1e9
				}
			}
		}
	}
	return out
}

// iterSamples returns the last iteration's samples of the task's latest
// run with iterations.
func iterSamples(log *events.Log, task string) float64 {
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
