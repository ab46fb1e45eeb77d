package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"zorepro/pipeline/provenance"
	"zorepro/pipeline/task"
	"zorepro/stages/report"
)

// ClaimCheck is one claim of the report, recomputed.
type ClaimCheck struct {
	ID      string `json:"id"`
	Figure  string `json:"figure"`
	Verdict string `json:"verdict"`
	// Equal reports that the claim recomputed from the figure's audited
	// per-seed numbers equals claims.json's entry, bit for bit.
	Equal   bool   `json:"equal"`
	Problem string `json:"problem,omitempty"`
}

// ClaimsReport is the audit of a reproduction report: every figure behind
// it audited against its events, and every claim recomputed from those
// figures' per-seed numbers with the report task's own streams.
type ClaimsReport struct {
	Report  string       `json:"report"`
	ID      string       `json:"id"`
	Task    *TaskInfo    `json:"task"`
	Figures []*Report    `json:"figures"`
	Claims  []ClaimCheck `json:"claims"`
	Checked int          `json:"claims_checked"`
	Equal   int          `json:"claims_equal"`
	Points  [2]int       `json:"points_equal_of_checked"`
	Events  int          `json:"events_used"`
}

// Claims audits the report that src names (a file of the report task's
// output): each input figure with Figure, then each claim, decoded from
// the task's recorded parameters, re-evaluated on the figure's recorded
// per-seed table with the report task's stream and compared with the
// recorded claims.json.
func (a *Auditor) Claims(ref string, src *provenance.FigureSource) (*ClaimsReport, error) {
	pp := src.Production
	rep := &ClaimsReport{Report: ref, ID: src.ID.String(), Task: infoOf(pp)}
	if _, ok := pp.Param("claims"); !ok {
		return nil, fmt.Errorf("%s records no claims parameter", pp.Task)
	}
	// The parameters the claims are decoded from: the list, a profile's
	// more_claims (each recorded whole), and its figure_caps (recorded
	// key by key, as "figure_caps.FIGURE CAP").
	params := map[string]any{}
	for _, name := range []string{"claims", "more_claims"} {
		raw, ok := pp.Param(name)
		if !ok {
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			return nil, fmt.Errorf("%s: %s parameter: %w", pp.Task, name, err)
		}
		params[name] = v
	}
	for _, line := range pp.Params() {
		k, v, _ := strings.Cut(line, " ")
		if fig, ok := strings.CutPrefix(k, "figure_caps."); ok {
			caps, _ := params["figure_caps"].(map[string]any)
			if caps == nil {
				caps = map[string]any{}
				params["figure_caps"] = caps
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: parameter %s: %w", pp.Task, k, err)
			}
			caps[fig] = x
		}
	}
	p := task.NewParams("(recorded)", pp.Task, params)
	claims := report.DecodeClaims(p)
	if err := p.Err(); err != nil {
		return nil, fmt.Errorf("%s: recorded claims: %w", pp.Task, err)
	}
	data, err := a.rec.ReadOutput(pp.Task, pp.Output, "claims.json")
	if err != nil {
		return nil, fmt.Errorf("claims.json of %s: %w", pp.Task, err)
	}
	var recorded struct {
		Claims []json.RawMessage `json:"claims"`
	}
	if err := json.Unmarshal(data, &recorded); err != nil {
		return nil, fmt.Errorf("claims.json of %s: %w", pp.Task, err)
	}
	tables := map[string]report.Table{}
	for _, in := range pp.Inputs() {
		if in.Slot != "figures" {
			continue // the tune tasks whose choices the provenance names
		}
		fp, err := a.produced(in.Task, in.Output)
		if err != nil {
			return nil, err
		}
		name, _ := fp.Param("figure")
		fr, err := a.Figure(name+".svg", &provenance.FigureSource{Production: fp, Entry: name + "-seeds.csv"}, Selection{})
		if err != nil {
			return nil, fmt.Errorf("figure %s: %w", name, err)
		}
		rep.Figures = append(rep.Figures, fr)
		rep.Points[0] += fr.Equal
		rep.Points[1] += fr.Checked
		rep.Events += fr.Events
		sb, err := a.rec.ReadOutput(fp.Task, fp.Output, name+"-seeds.csv")
		if err != nil {
			return nil, err
		}
		if tables[name], err = report.ParseSeedsCSV(sb); err != nil {
			return nil, fmt.Errorf("%s-seeds.csv: %w", name, err)
		}
	}
	for i, c := range claims {
		ck := ClaimCheck{ID: c.ID, Figure: c.Figure}
		t, ok := tables[c.Figure]
		switch {
		case !ok:
			ck.Problem = "no input figure " + c.Figure
		case i >= len(recorded.Claims):
			ck.Problem = "claims.json has no entry for it"
		default:
			res := report.Evaluate(c, t)
			ck.Verdict = string(res.Verdict)
			got, err := json.Marshal(report.ResultOf(res))
			var want bytes.Buffer
			if err == nil {
				err = json.Compact(&want, recorded.Claims[i])
			}
			switch {
			case err != nil:
				ck.Problem = err.Error()
			case !bytes.Equal(got, want.Bytes()):
				ck.Problem = "recomputed " + abbreviate(string(got)) + ", recorded " + abbreviate(want.String())
			default:
				ck.Equal = true
			}
		}
		rep.Checked++
		if ck.Equal {
			rep.Equal++
		}
		rep.Claims = append(rep.Claims, ck)
	}
	return rep, nil
}

func abbreviate(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return strings.TrimSpace(s)
}
