package web

import (
	"fmt"
	"net/http"
	"net/url"
	"os"

	"zorepro/pipeline/provenance"
	"zorepro/stages/audit"
)

type reexecView struct {
	Figure, Query string
	Point         *audit.Point
	Tasks         []provenance.Verified
	Reproduced    bool
	// First is the first task that did not reproduce, with why.
	First *provenance.Verified
	Err   string
}

// reexecute re-executes the tasks behind one plotted point (each seed's
// data, tune, train and evaluate tasks, then the plot) into a scratch
// directory, as `pipeline verify` does, and shows "reproduced" or the first
// difference. Only a server started with Options.AllowReexecute has it; one
// re-execution runs at a time.
func (s *Server) reexecute(r *http.Request) (*view, error) {
	if !s.opt.AllowReexecute {
		return nil, fmt.Errorf("%w: this server was not started with --allow-reexecute", ErrNotAllowed)
	}
	if !s.reexecMu.TryLock() {
		return nil, fmt.Errorf("%w: a re-execution is already running; try again when it ends", ErrBusy)
	}
	defer s.reexecMu.Unlock()
	if err := r.ParseForm(); err != nil {
		return nil, err
	}
	q := url.Values{"figure": {r.PostForm.Get("figure")}, "panel": {r.PostForm.Get("panel")}, "curve": {r.PostForm.Get("curve")}, "x": {r.PostForm.Get("x")}}
	f, rep, err := s.auditPoint(q)
	if err != nil {
		return nil, err
	}
	pt := &rep.Points[0]
	v := &reexecView{Figure: f.Name, Query: q.Encode(), Point: pt}
	var prods []*provenance.Production
	seen := map[string]bool{}
	add := func(ti *audit.TaskInfo) error {
		if ti == nil || seen[ti.Output] {
			return nil
		}
		seen[ti.Output] = true
		p, err := provenance.Produced(s.eng.Events, ti.Task, ti.Output)
		if err != nil {
			return err
		}
		prods = append(prods, p)
		return nil
	}
	for _, sd := range pt.Seeds {
		for _, ti := range []*audit.TaskInfo{sd.Data, tuneInfo(sd.Tune), sd.Train, sd.Evaluate} {
			if err := add(ti); err != nil {
				return nil, err
			}
		}
	}
	if err := add(rep.Plot); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pipeline-serve-reexec-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	sc, err := provenance.OpenScratch(dir)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	vs, err := provenance.New(s.eng).Verify(r.Context(), prods, sc, nil)
	if err != nil {
		v.Err = err.Error()
	}
	v.Tasks = vs
	v.Reproduced = err == nil && len(vs) == len(prods)
	for i := range vs {
		if vs[i].Verdict != provenance.Reproduced {
			v.Reproduced = false
			if v.First == nil {
				v.First = &vs[i]
			}
		}
	}
	return &view{tmpl: "reexec.html", title: "Re-executing a point of " + f.Name, data: v}, nil
}

func tuneInfo(t *audit.TuneInfo) *audit.TaskInfo {
	if t == nil {
		return nil
	}
	return t.TaskInfo
}
