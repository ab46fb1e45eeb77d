package provenance

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"zorepro/pipeline"
	"zorepro/pipeline/events"
	"zorepro/pipeline/store"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Production is what the event log says about how one output of a task was
// computed: the action, the runs that executed it (a task interrupted and
// resumed has several), its identity transcript and its random streams.
type Production struct {
	Task       string    `json:"task"`
	Action     string    `json:"action"`
	Output     string    `json:"output"`
	Run        uint64    `json:"run"`      // the run that finished the action
	Segments   []Segment `json:"segments"` // the runs that executed it, oldest first
	Transcript []string  `json:"transcript"`
	Streams    *Streams  `json:"streams,omitempty"`
	// Damage, when not empty, says why the event log's record of Output
	// cannot be read back (only VerifyCandidates returns such a
	// production; its other fields are empty).
	Damage string `json:"damage,omitempty"`
}

// Segment is one run's share of an action: from the beginning, or resumed
// after a checkpointed iteration.
type Segment struct {
	Run       uint64 `json:"run"`
	Resumed   bool   `json:"resumed"`
	ResumedAt int64  `json:"resumed_at,omitempty"` // the checkpoint's iteration
}

// Streams is a task's "streams" event: the rule that derives every stream
// and the families the task drew from.
type Streams struct {
	Derivation string          `json:"derivation"`
	Families   []stream.Family `json:"families"`
}

// InputRef is one "input" line of a transcript.
type InputRef struct {
	Slot   string `json:"slot"`
	Task   string `json:"task"`
	Output string `json:"output"`
}

// Produced finds the recorded run of task whose output is output.
func Produced(log *events.Log, task, output string) (*Production, error) {
	evs, err := log.Events(task)
	if err != nil {
		return nil, fmt.Errorf("events of %s: %w", task, err)
	}
	p := &Production{Task: task, Output: output}
	for _, ev := range evs { // the latest matching "done" wins
		if ev.Type == events.TypeState && ev.State == events.StateDone && ev.Output == output {
			p.Action, p.Run = ev.Action, ev.Run
		}
	}
	if p.Action == "" {
		return nil, notRecordedf("no recorded run of %s produced %s", task, output)
	}
	for _, ev := range evs {
		if ev.Action != p.Action || ev.Run > p.Run {
			continue
		}
		switch {
		case ev.Type == events.TypeTranscript:
			p.Transcript = strings.Split(ev.Transcript, "\n")
		case ev.Type == events.TypeStreams && ev.Run == p.Run:
			var s Streams
			if err := json.Unmarshal(ev.Data, &s); err != nil {
				return nil, fmt.Errorf("%w: streams event %d of %s: %v", events.ErrCorruptLog, ev.Seq, task, err)
			}
			p.Streams = &s
		case ev.Type == events.TypeState && ev.State == events.StateStarted:
			p.Segments = append(p.Segments, Segment{Run: ev.Run})
		case ev.Type == events.TypeState && ev.State == events.StateResumed && len(p.Segments) > 0 && p.Segments[len(p.Segments)-1].Run == ev.Run:
			var d struct {
				Iteration int64 `json:"iteration"`
			}
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				return nil, fmt.Errorf("%w: resumed event %d of %s: %v", events.ErrCorruptLog, ev.Seq, task, err)
			}
			p.Segments[len(p.Segments)-1].Resumed, p.Segments[len(p.Segments)-1].ResumedAt = true, d.Iteration
		}
	}
	if p.Transcript == nil {
		return nil, fmt.Errorf("%w: %s action %s has no transcript event", events.ErrCorruptLog, task, p.Action)
	}
	// Only the segments that lead to the finished result count: the last
	// run that started from scratch and the resumes after it.
	for i := len(p.Segments) - 1; i > 0; i-- {
		if !p.Segments[i].Resumed {
			p.Segments = p.Segments[i:]
			break
		}
	}
	return p, nil
}

// Lines returns the values of the transcript lines that start with key+" ".
func (p *Production) Lines(key string) []string {
	var out []string
	for _, l := range p.Transcript {
		if v, ok := strings.CutPrefix(l, key+" "); ok {
			out = append(out, v)
		}
	}
	return out
}

// Param returns a resolved parameter as the transcript records it (JSON),
// with a string value unquoted.
func (p *Production) Param(name string) (string, bool) {
	for _, v := range p.Lines("param") {
		if k, val, ok := strings.Cut(v, " "); ok && k == name {
			var s string
			if strings.HasPrefix(val, `"`) && json.Unmarshal([]byte(val), &s) == nil {
				return s, true
			}
			return val, true
		}
	}
	return "", false
}

// Params returns every resolved parameter as "name value".
func (p *Production) Params() []string { return p.Lines("param") }

// Code returns the code identity of the task's package closure.
func (p *Production) Code() string {
	if v := p.Lines("code"); len(v) > 0 {
		return v[0]
	}
	return ""
}

// Seed returns the task's root seed.
func (p *Production) Seed() (uint64, bool) {
	if v := p.Lines("seed"); len(v) > 0 {
		s, err := strconv.ParseUint(v[0], 10, 64)
		return s, err == nil
	}
	return 0, false
}

// Inputs returns the transcript's inputs, in transcript (sorted) order.
func (p *Production) Inputs() []InputRef {
	var out []InputRef
	for _, v := range p.Lines("input") {
		f := strings.Fields(v)
		if len(f) == 3 {
			out = append(out, InputRef{Slot: f[0], Task: f[1], Output: f[2]})
		}
	}
	return out
}

// Iterations returns the iteration events that led to the output: each
// resumed segment continues after its checkpoint, replacing whatever an
// earlier run recorded past that point.
func (p *Production) Iterations(log *events.Log) ([]task.Iter, error) {
	var out []task.Iter
	for _, s := range p.Segments {
		its, err := log.Iterations(p.Task, s.Run)
		if err != nil {
			return nil, err
		}
		if !s.Resumed {
			out = its
			continue
		}
		n := 0
		for n < len(out) && out[n].Iteration <= s.ResumedAt && (n == 0 || out[n].Iteration > out[n-1].Iteration) {
			n++
		}
		out = append(out[:n:n], its...)
	}
	return out, nil
}

// Checked returns the entries of task's recorded output after checking
// that its manifest and every entry it names are present and intact in the
// store: the one check every command makes before it reads or trusts a
// recorded output (audit, replay, show, verify). The error wraps
// ErrDamaged and names the entry and the task.
func (r *Record) Checked(task, output string) ([]pipeline.OutputEntry, error) {
	es, err := r.eng.Manifest(output)
	if err != nil {
		return nil, fmt.Errorf("%w: the output manifest %s of %s: %w", ErrDamaged, output, task, err)
	}
	for _, en := range es {
		if err := r.eng.Store.Check(en.ID); err != nil {
			return nil, fmt.Errorf("%w: entry %s of %s (output %s): %w", ErrDamaged, en.Name, task, output, err)
		}
	}
	return es, nil
}

// OutputEntries returns the named entries of task's recorded output
// (Checked).
func (r *Record) OutputEntries(task, output string) (map[string]store.ID, error) {
	es, err := r.Checked(task, output)
	if err != nil {
		return nil, err
	}
	out := make(map[string]store.ID, len(es))
	for _, en := range es {
		out[en.Name] = en.ID
	}
	return out, nil
}

// ReadOutput returns the bytes of one named entry of task's recorded
// output, after checking the whole output (Checked): a damaged entry, this
// one or another, is an error wrapping ErrDamaged.
func (r *Record) ReadOutput(task, output, name string) ([]byte, error) {
	es, err := r.Checked(task, output)
	if err != nil {
		return nil, err
	}
	for _, en := range es {
		if en.Name == name {
			return r.eng.Store.Get(en.ID)
		}
	}
	return nil, fmt.Errorf("output %s has no entry %q", output, name)
}

// FigureSource is the recorded plot task behind a figure file.
type FigureSource struct {
	Production *Production
	Entry      string   // the pipeline.OutputEntry name that matched
	ID         store.ID // the matched content
}

// FindFigure resolves a figure: a file (whose content is looked up) or an
// artifact ID (of one figure file or of a plot task's whole output). The
// plan's figure-exporting tasks are searched, latest runs first.
func (r *Record) FindFigure(ref string, content []byte) (*FigureSource, error) {
	var want store.ID
	if content != nil {
		want = store.Sum(content)
	} else {
		id, err := store.ParseID(ref)
		if err != nil {
			return nil, fmt.Errorf("%s: no such file, and not an artifact ID (xxh64-...)", ref)
		}
		want = id
	}
	var unreadable []string
	for _, t := range r.eng.Plan.Tasks {
		if fx, ok := t.Runner.(pipeline.FigureExporter); !ok || !fx.ExportFigures() {
			continue
		}
		evs, err := r.eng.Events.Events(t.Path)
		if err != nil {
			return nil, err
		}
		var seen []string
		for i := len(evs) - 1; i >= 0; i-- {
			ev := evs[i]
			if ev.Type != events.TypeState || (ev.State != events.StateDone && ev.State != events.StateCached) || ev.Output == "" || slices.Contains(seen, ev.Output) {
				continue
			}
			seen = append(seen, ev.Output)
			match := ""
			if ev.Output == want.String() {
				match = "(the whole output)"
			} else if es, err := r.eng.Manifest(ev.Output); err != nil {
				unreadable = append(unreadable, fmt.Sprintf("%s's output %s: %v", t.Path, ev.Output, err))
			} else {
				for _, en := range es {
					if en.ID == want {
						match = en.Name
						break
					}
				}
			}
			if match == "" {
				continue
			}
			p, err := Produced(r.eng.Events, t.Path, ev.Output)
			if err != nil {
				return nil, err
			}
			if _, err := r.Checked(t.Path, ev.Output); err != nil {
				return nil, fmt.Errorf("%s: %w", ref, err)
			}
			return &FigureSource{Production: p, Entry: match, ID: want}, nil
		}
	}
	if len(unreadable) > 0 {
		return nil, fmt.Errorf("%s (%s) is not in any readable output of this DAG's plot tasks; %d recorded outputs could not be read: %s",
			ref, want, len(unreadable), strings.Join(unreadable, "; "))
	}
	return nil, notRecordedf("%s (%s) is not an output of any recorded run of this DAG's plot tasks", ref, want)
}

func sortedNames(m map[string]store.ID) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
