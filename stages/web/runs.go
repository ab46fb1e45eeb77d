package web

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"zorepro/pipeline"
	"zorepro/pipeline/events"
	"zorepro/pipeline/provenance"
	"zorepro/stages/report"
)

// maxRerun bounds the reran tasks a comparison lists, and maxLine each
// transcript line shown (a report's claims parameter is kilobytes).
const (
	maxRerun = 500
	maxLine  = 240
)

// clip cuts s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("… (%d bytes)", len(s))
}

type runRow struct {
	Run                   uint64
	Profile, State, Start string
	Done, Cached, Failed  int
	Args                  string
}

// runsPage lists the runs the log records, with what each did, and a form
// to compare two of them.
func (s *Server) runsPage(r *http.Request) (*view, error) {
	runs, err := s.runRows()
	if err != nil {
		return nil, err
	}
	return &view{tmpl: "runs.html", title: "Runs", data: runs}, nil
}

// runRows returns every run's row. Rows are kept between requests, each
// with the last seq it has counted, so that a request reads only the
// events recorded since the previous one (a run of the paper profile has
// tens of thousands).
func (s *Server) runRows() ([]runRow, error) {
	log := s.eng.Events
	runs, err := log.Runs()
	if err != nil {
		return nil, err
	}
	_, live, _, err := log.Latest()
	if err != nil {
		return nil, err
	}
	s.runsMu.Lock()
	defer s.runsMu.Unlock()
	if s.runs == nil {
		s.runs = map[uint64]*runCount{}
	}
	var out []runRow
	for i, ev := range runs {
		rc := s.runs[ev.Run]
		if rc == nil {
			rc = &runCount{row: runRow{Run: ev.Run}}
			if start, ok, err := log.RunStart(ev.Run); err == nil && ok {
				var d struct {
					Profile string   `json:"profile"`
					Args    []string `json:"args"`
				}
				json.Unmarshal(start.Data, &d)
				rc.row.Profile, rc.row.Args = d.Profile, fmt.Sprint(d.Args)
				if start.Time > 0 {
					rc.row.Start = time.Unix(0, start.Time).UTC().Format("2006-01-02 15:04")
				}
			}
			s.runs[ev.Run] = rc
		}
		rc.row.State = runState(ev.State, i == len(runs)-1 && live)
		evs, err := log.RunEventsAfter(ev.Run, rc.seen)
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			rc.seen = e.Seq
			if e.Type != events.TypeState {
				continue
			}
			switch e.State {
			case events.StateDone:
				rc.row.Done++
			case events.StateCached:
				rc.row.Cached++
			case events.StateFailed:
				rc.row.Failed++
			}
		}
		out = append(out, rc.row)
	}
	return out, nil
}

// runState is a run's state as its row shows it: a run that recorded
// only its start is running if it is the latest run of a store a run
// holds, and was killed otherwise.
func runState(state string, live bool) string {
	switch {
	case state != events.RunStarted:
		return state
	case live:
		return "running"
	default:
		return "killed (no end recorded)"
	}
}

// runCount is one run's row as counted up to the event seen.
type runCount struct {
	row  runRow
	seen uint64
}

type compareView struct {
	A, B     uint64
	Reran    []rerun
	ReranCut int
	New      int // reran tasks with nothing recorded at A
	Figures  []figureChange
	Verdicts []verdictChange
	Runs     []runRow
}

type rerun struct {
	Task string
	Why  []string // transcript lines, "-" at A, "+" at B
}

type figureChange struct {
	Task  string
	Files []string // the files whose content differs, or were added or removed
}

type verdictChange struct{ Claim, A, B string }

// comparePage compares what the store recorded as of run a with what it
// recorded as of run b: the tasks that ran again in between and why (their
// identity transcripts' changed lines), the figures whose files changed,
// and the claims whose verdicts changed.
func (s *Server) comparePage(r *http.Request) (*view, error) {
	a, errA := strconv.ParseUint(r.URL.Query().Get("a"), 10, 64)
	b, errB := strconv.ParseUint(r.URL.Query().Get("b"), 10, 64)
	if errA != nil || errB != nil {
		return nil, fmt.Errorf("%w: compare needs two run numbers, ?a=RUN&b=RUN", ErrNotFound)
	}
	if a > b {
		a, b = b, a
	}
	at, err := s.outputsAt(a, b)
	if err != nil {
		return nil, err
	}
	v := &compareView{A: a, B: b}
	if v.Runs, err = s.runRows(); err != nil {
		return nil, err
	}
	rec := provenance.New(s.eng)
	for _, t := range s.eng.Plan.Tasks {
		st := at[t.Path]
		if st[1].out == "" || st[1].out == st[0].out {
			continue
		}
		if fx, ok := t.Runner.(pipeline.FigureExporter); ok && fx.ExportFigures() {
			if fc := s.figureChange(t.Path, st[0].out, st[1].out); len(fc.Files) > 0 {
				v.Figures = append(v.Figures, fc)
			}
		}
		if t.Path == ReportTask {
			v.Verdicts = s.verdictChanges(rec, st[0].out, st[1].out)
		}
		if !st[1].executed {
			continue
		}
		if len(v.Reran) >= maxRerun {
			v.ReranCut++
			continue
		}
		rr := rerun{Task: t.Path}
		pb, err := provenance.Produced(s.eng.Events, t.Path, st[1].out)
		if err != nil {
			return nil, err
		}
		if st[0].out == "" {
			v.New++
			rr.Why = []string{"nothing recorded as of run " + strconv.FormatUint(a, 10)}
		} else if pa, err := provenance.Produced(s.eng.Events, t.Path, st[0].out); err == nil {
			for _, l := range pipeline.DiffTranscripts(pa.Transcript, pb.Transcript) {
				rr.Why = append(rr.Why, clip(l, maxLine))
			}
		}
		v.Reran = append(v.Reran, rr)
	}
	return &view{tmpl: "compare.html", title: fmt.Sprintf("Run %d against run %d", b, a), data: v}, nil
}

type recorded struct {
	out      string
	executed bool // the output at B was computed by a run after A
}

// outputsAt scans the log once and returns, per task, the output its
// latest done or cached state had as of run a and as of run b.
func (s *Server) outputsAt(a, b uint64) (map[string][2]recorded, error) {
	out := map[string][2]recorded{}
	err := s.eng.Events.Scan(func(ev events.Event) error {
		if ev.Type != events.TypeState || ev.Output == "" || (ev.State != events.StateDone && ev.State != events.StateCached) {
			return nil
		}
		st := out[ev.Task]
		if ev.Run <= a {
			st[0] = recorded{out: ev.Output}
		}
		if ev.Run <= b {
			ex := ev.Run > a && ev.State == events.StateDone
			if ev.Output == st[1].out && !ex {
				ex = st[1].executed // cached later: still computed after A
			}
			st[1] = recorded{out: ev.Output, executed: ex}
		}
		out[ev.Task] = st
		return nil
	})
	return out, err
}

// figureChange lists the files of a plot task's two outputs that differ.
func (s *Server) figureChange(task, a, b string) figureChange {
	fc := figureChange{Task: task}
	ids := func(out string) map[string]string {
		m := map[string]string{}
		if out == "" {
			return m
		}
		es, _ := s.eng.Manifest(out)
		for _, e := range es {
			m[e.Name] = e.ID.String()
		}
		return m
	}
	fc.Files = changedKeys(ids(a), ids(b))
	return fc
}

// changedKeys returns, sorted, the keys whose values differ between a and
// b (a key missing from one has the value "" there).
func changedKeys(a, b map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if a[k] != b[k] {
			out = append(out, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b)) {
		if _, ok := a[k]; !ok && b[k] != "" {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// verdictChanges compares two report outputs' claims.json.
func (s *Server) verdictChanges(rec *provenance.Record, a, b string) []verdictChange {
	read := func(out string) map[string]string {
		m := map[string]string{}
		if out == "" {
			return m
		}
		data, err := rec.ReadOutput(ReportTask, out, "claims.json")
		if err != nil {
			return m
		}
		var doc struct{ Claims []report.ClaimResult }
		json.Unmarshal(data, &doc)
		for _, c := range doc.Claims {
			m[c.ID] = string(c.Verdict)
		}
		return m
	}
	va, vb := read(a), read(b)
	var out []verdictChange
	for _, id := range changedKeys(va, vb) {
		out = append(out, verdictChange{id, va[id], vb[id]})
	}
	return out
}
