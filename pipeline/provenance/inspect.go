package provenance

import (
	"strings"

	"zorepro/pipeline"
	"zorepro/pipeline/dag"
)

// Plan pipeline.OutputEntry states reported by Explain.
const (
	WouldCache = "cached"
	WouldRun   = "run"
)

// Explained says what a run would do with one task, and why.
type Explained struct {
	Task       string   `json:"task"`
	Do         string   `json:"do"` // WouldCache or WouldRun
	Action     string   `json:"action,omitempty"`
	Output     string   `json:"output,omitempty"`
	Reason     string   `json:"reason"`
	Transcript []string `json:"-"`
	// Recorded is the transcript of the task's latest recorded run.
	Recorded []string `json:"-"`
	// Previous is the transcript of the run before that.
	Previous    []string `json:"-"`
	RecordedRun uint64   `json:"recorded_run,omitempty"`
	// Changed is whether the task would run because its identity changed
	// since its latest recorded run (not because it never ran, did not
	// finish, or waits for an upstream task).
	Changed bool `json:"changed,omitempty"`
}

// Explain walks the plan without running anything and reports, for every
// task, whether a run would reuse a cached output and why not otherwise.
func (r *Record) Explain() ([]Explained, error) {
	outputs := map[string]string{}
	byPath := map[string]*Explained{}
	var out []Explained
	for _, t := range r.eng.Plan.Tasks {
		x := Explained{Task: t.Path, Do: WouldRun}
		if latest, prev, ok, err := r.eng.Events.Transcripts(t.Path); err != nil {
			return nil, err
		} else if ok {
			x.Recorded = splitLines(latest.Transcript)
			x.RecordedRun = latest.Run
			x.Previous = splitLines(prev.Transcript)
		}
		pendingUp := ""
		deps := map[string]string{}
		for _, d := range t.Deps {
			if o, ok := outputs[d.Path]; ok {
				deps[d.Path] = o
			} else if pendingUp == "" {
				pendingUp = d.Path
			}
		}
		lines, err := pipeline.Transcript(t, r.eng.Code, r.eng.Platform, deps)
		if err != nil {
			return nil, err
		}
		x.Transcript = lines
		switch {
		case pendingUp != "":
			x.Reason = "upstream " + pendingUp + " will run first"
		default:
			act := pipeline.Action(lines)
			x.Action = act.String()
			rec, ok, err := r.eng.Events.Action(act.String())
			if err != nil {
				return nil, err
			}
			switch {
			case r.eng.Opt.Force:
				x.Reason = "--force"
			case ok:
				if err := r.eng.VerifyOutput(rec.Output); err != nil {
					x.Reason = "cached output " + damage(err, "corrupt", "missing") + ": " + err.Error()
					break
				}
				x.Do, x.Output, x.Reason = WouldCache, rec.Output, "identity unchanged"
				outputs[t.Path] = rec.Output
			case x.Recorded == nil:
				x.Reason = "never run"
			default:
				diff := pipeline.DiffTranscripts(x.Recorded, lines)
				x.Reason, x.Changed = describeDiff(diff), len(diff) > 0
			}
		}
		out = append(out, x)
		byPath[t.Path] = &out[len(out)-1]
	}
	return out, nil
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// describeDiff summarises which kinds of transcript lines changed.
func describeDiff(diff []string) string {
	if len(diff) == 0 {
		return "identity unchanged but no cached output"
	}
	kinds := map[string]bool{}
	var order []string
	for _, l := range diff {
		k := strings.SplitN(l[2:], " ", 2)[0]
		if strings.HasPrefix(k, "code-") {
			k = "code"
		}
		if !kinds[k] {
			kinds[k] = true
			order = append(order, k)
		}
	}
	return "changed: " + strings.Join(order, ", ")
}

// Find returns the plan task with the given path.
func Find(p *dag.Plan, path string) (*dag.Task, error) {
	if t := p.Task(path); t != nil {
		return t, nil
	}
	return nil, &unknownTaskError{path}
}

type unknownTaskError struct{ path string }

func (e *unknownTaskError) Error() string {
	return "unknown task " + e.path + " (see 'pipeline dag' for task names)"
}

func (e *unknownTaskError) Unwrap() error { return ErrUnknownTask }
