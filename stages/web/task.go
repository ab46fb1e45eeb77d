package web

import (
	"bytes"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"zorepro/pipeline"
	"zorepro/pipeline/events"
	"zorepro/pipeline/provenance"
	"zorepro/pipeline/task"
)

// maxEvents bounds the events a task page lists (the latest ones).
const maxEvents = 500

// maxCurvePoints is the longest series drawn in full.
const maxCurvePoints = 100_000

type taskView struct {
	Path       string
	Stage      string
	Kind       string
	Coords     []task.Coord
	Seed       string
	Params     []string
	State      *events.StateRecord
	Running    bool
	Transcript []string
	// Why is the latest transcript against the previous one ("- old",
	// "+ new" lines, pipeline.DiffTranscripts): why the task ran again.
	Why         []string
	PreviousRun uint64
	Inputs      []provenance.InputRef
	Planned     []plannedInput
	Outputs     []outputRow
	Segments    []provenance.Segment
	Streams     *provenance.Streams
	Events      []eventRow
	EventsCut   int
	Charts      []template.HTML
	Iterations  int
	Downsampled bool
}

// outputRow is one file of the task's recorded output, with its text
// when it is short (a tuning trial's score, a selection's choice).
type outputRow struct {
	pipeline.OutputEntry
	Text string
}

// previewMax bounds the size of an output file shown whole on its task's
// page; `pipeline show TASK FILE` prints any.
const previewMax = 8192

// outputRows reads the text of es's short text files from the store.
func (s *Server) outputRows(es []pipeline.OutputEntry) []outputRow {
	rows := make([]outputRow, len(es))
	for i, en := range es {
		rows[i].OutputEntry = en
		if en.Size > previewMax {
			continue
		}
		if b, err := s.eng.Store.Get(en.ID); err == nil && utf8.Valid(b) && !bytes.ContainsRune(b, 0) {
			rows[i].Text = string(b)
		}
	}
	return rows
}

// plannedInput is one input of the plan, with the output of it the
// recorded run used ("" when not recorded).
type plannedInput struct{ Slot, Task, Output string }

type eventRow struct {
	Seq                      uint64
	Time, Type, State, Error string
	Run                      uint64
	Detail                   string
}

func (s *Server) taskPage(r *http.Request) (*view, error) {
	path := r.PathValue("path")
	t := s.eng.Plan.Task(path)
	if t == nil {
		return nil, fmt.Errorf("%w: %s is no task of profile %s", ErrNotFound, path, s.opt.Profile)
	}
	log := s.eng.Events
	v := &taskView{Path: t.Path, Stage: t.Stage.Name, Kind: t.Kind.Name(), Coords: t.Coords, Params: t.Params.Resolved()}
	if t.HasSeed {
		v.Seed = fmt.Sprint(t.Seed)
	}
	if st, ok, err := log.LastState(t.Path); err != nil {
		return nil, err
	} else if ok {
		v.State = &st
	}
	run, inProgress, _, err := log.Latest()
	if err != nil {
		return nil, err
	}
	if v.State != nil && inProgress && v.State.Run == run && (v.State.State == events.StateStarted || v.State.State == events.StateResumed) {
		v.Running = true
	}
	latest, previous, ok, err := log.Transcripts(t.Path)
	if err != nil {
		return nil, err
	}
	if ok {
		v.Transcript = strings.Split(strings.TrimSuffix(latest.Transcript, "\n"), "\n")
		if previous.Transcript != "" {
			prev := strings.Split(strings.TrimSuffix(previous.Transcript, "\n"), "\n")
			v.PreviousRun = previous.Run
			v.Why = pipeline.DiffTranscripts(prev, v.Transcript)
		}
	}
	var its []task.Iter
	if v.State != nil && v.State.Output != "" {
		p, err := provenance.Produced(log, t.Path, v.State.Output)
		if err != nil {
			return nil, err
		}
		v.Inputs, v.Segments, v.Streams = p.Inputs(), p.Segments, p.Streams
		es, err := s.eng.Manifest(v.State.Output)
		if err != nil {
			return nil, err
		}
		v.Outputs = s.outputRows(es)
		if its, err = p.Iterations(log); err != nil {
			return nil, err
		}
	} else if v.State != nil {
		if its, err = log.Iterations(t.Path, v.State.Run); err != nil {
			return nil, err
		}
	}
	evs, err := log.Events(t.Path)
	if err != nil {
		return nil, err
	}
	if len(evs) > maxEvents {
		v.EventsCut = len(evs) - maxEvents
		evs = evs[len(evs)-maxEvents:]
	}
	for _, ev := range evs {
		row := eventRow{Seq: ev.Seq, Type: string(ev.Type), State: ev.State, Error: ev.Error, Run: ev.Run}
		if ev.Time > 0 {
			row.Time = time.Unix(0, ev.Time).UTC().Format("2006-01-02 15:04:05")
		}
		switch {
		case ev.Checkpoint != nil:
			row.Detail = fmt.Sprintf("checkpoint at iteration %d: %s", ev.Checkpoint.Iteration, ev.Checkpoint.Content)
		case ev.Output != "":
			row.Detail = "output " + ev.Output
		case ev.Action != "":
			row.Detail = "action " + ev.Action
		}
		v.Events = append(v.Events, row)
	}
	used := map[[2]string]string{} // the outputs the recorded run used
	for _, in := range v.Inputs {
		used[[2]string{in.Slot, in.Task}] = in.Output
	}
	for _, slot := range slices.Sorted(maps.Keys(t.Inputs)) {
		for _, up := range t.Inputs[slot] {
			v.Planned = append(v.Planned, plannedInput{slot, up.Path, used[[2]string{slot, up.Path}]})
		}
	}
	v.Iterations = len(its)
	v.Charts, v.Downsampled = curveCharts(its)
	return &view{tmpl: "task.html", title: t.Path, data: v, refresh: v.Running}, nil
}

// curveCharts draws each metric of the iteration events against samples
// (against the iteration where no samples are counted).
func curveCharts(its []task.Iter) ([]template.HTML, bool) {
	if len(its) == 0 {
		return nil, false
	}
	its, cut := downsample(its, maxCurvePoints)
	var names []string
	for _, it := range its {
		for _, m := range it.Metrics {
			if !slices.Contains(names, m.Name) {
				names = append(names, m.Name)
			}
		}
	}
	useSamples := its[len(its)-1].Samples > 0
	xl := "iteration"
	if useSamples {
		xl = "samples"
	}
	var out []template.HTML
	for i, n := range names {
		sr := series{Name: n, Color: palette[i%len(palette)]}
		for _, it := range its {
			x := float64(it.Iteration)
			if useSamples {
				x = float64(it.Samples)
			}
			for _, m := range it.Metrics {
				if m.Name == n {
					sr.Points = append(sr.Points, point{X: x, Y: m.Value})
				}
			}
		}
		out = append(out, chart{Title: n, XLabel: xl, YLabel: n, Series: []series{sr}}.svg())
	}
	return out, cut
}
