package web

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"zorepro/stages/interim"
	"zorepro/stages/report"
)

// ReportTask is the plan task whose claims the claims page computes.
const ReportTask = "report"

// claimsEvery is how old a claims page may get before it is computed
// again: it reads every recorded figure and may plot some from their
// inputs.
const claimsEvery = 20 * time.Second

type claimsView struct {
	Doc     *interim.Doc
	Claims  []claimRow
	Pending []pendingRow
	At      time.Time
}

type claimRow struct {
	report.ClaimResult
	Findings []findingRow
}

type findingRow struct {
	report.Finding
	Points []pointLink // the plotted points behind it, one per curve
}

type pointLink struct{ Curve, Href string }

type pendingRow struct{ ID, Why string }

// claimsPage computes the report's claims from what the store records now
// (stages/interim, as report --interim): those that can be decided, with
// every finding linked to the plotted points behind it, and those still
// waiting, with what for.
func (s *Server) claimsPage(r *http.Request) (*view, error) {
	doc, at, err := s.interim(r.Context())
	if err != nil {
		return nil, err
	}
	v := &claimsView{Doc: doc, At: at}
	for i, cr := range doc.Claims {
		row := claimRow{ClaimResult: cr}
		for _, f := range cr.Findings {
			row.Findings = append(row.Findings, findingRow{Finding: f, Points: pointLinks(doc.Results[i].Claim, f)})
		}
		v.Claims = append(v.Claims, row)
	}
	for _, id := range slices.Sorted(maps.Keys(doc.Pending)) {
		v.Pending = append(v.Pending, pendingRow{id, doc.Pending[id]})
	}
	return &view{tmpl: "claims.html", title: "Claims and verdicts", data: v}, nil
}

// interim returns the latest interim report: computed now if there is
// none yet, else the one kept, recomputed in the background when it is
// older than claimsEvery (a page never waits for a recomputation; its
// time says how old it is).
func (s *Server) interim(ctx context.Context) (*interim.Doc, time.Time, error) {
	s.claimsMu.Lock()
	doc, at := s.claims, s.claimsAt
	stale := doc != nil && time.Since(at) > claimsEvery && !s.claimsBusy
	if stale {
		s.claimsBusy = true
	}
	s.claimsMu.Unlock()
	if stale {
		go s.computeClaims(context.Background())
	}
	if doc != nil {
		return doc, at, nil
	}
	return s.computeClaims(ctx)
}

// computeClaims computes the interim report from the shared dry run and
// keeps it (its time is the dry run's).
func (s *Server) computeClaims(ctx context.Context) (*interim.Doc, time.Time, error) {
	xs, at, err := s.explain()
	var doc *interim.Doc
	if err == nil {
		doc, err = interim.ComputeExplained(ctx, s.eng, xs, ReportTask, s.opt.Profile, &s.claimsMemo)
	}
	s.claimsMu.Lock()
	defer s.claimsMu.Unlock()
	s.claimsBusy = false
	if err != nil {
		return nil, time.Time{}, err
	}
	s.claims, s.claimsAt = doc, at
	return doc, s.claimsAt, nil
}

var (
	xNumber  = regexp.MustCompile(`x = ([-+0-9.e]+)`)
	xByCurve = regexp.MustCompile(`([A-Za-z0-9_-]+): ([-+0-9.e]+)`)
)

// interimImage serves a PNG of a figure the claims page plotted from its
// recorded inputs (one its plot task has not recorded yet), from the
// latest claims computation.
func (s *Server) interimImage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	s.claimsMu.Lock()
	doc := s.claims
	s.claimsMu.Unlock()
	if doc != nil {
		for _, f := range doc.Figures {
			if b, ok := f.Images[name]; ok {
				w.Header().Set("Content-Type", "image/png")
				w.Write(b)
				return
			}
		}
	}
	s.fail(w, r, fmt.Errorf("%w: no figure plotted from recorded inputs has a file %q (open the claims page first)", ErrNotFound, name))
}

// pointLinks are the audit trails of the plotted points a finding is
// computed from: each of the claim's curves at the finding's panel and x,
// a curve's own x where the finding gives one per curve ("x = ars: 6000,
// reinforce: 10240"); none where it spans every x.
func pointLinks(c report.Claim, f report.Finding) []pointLink {
	panel, x := f.Key, ""
	perCurve := map[string]string{}
	if c.Over == "x" {
		panel, x = c.Panel, f.Key
	} else if rest, ok := strings.CutPrefix(f.X, "x = "); ok {
		for _, m := range xByCurve.FindAllStringSubmatch(rest, -1) {
			perCurve[m[1]] = m[2]
		}
		if m := xNumber.FindStringSubmatch(f.X); m != nil {
			x = m[1]
		}
	}
	var out []pointLink
	for _, cv := range c.Curves {
		at := cmp.Or(perCurve[cv], x)
		if at == "" {
			continue
		}
		q := url.Values{"figure": {c.Figure}, "panel": {panel}, "curve": {cv}, "x": {at}}
		out = append(out, pointLink{cv, "/point?" + q.Encode()})
	}
	return out
}
