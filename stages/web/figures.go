package web

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"

	"zorepro/pipeline"
	"zorepro/pipeline/provenance"
	"zorepro/pipeline/store"
	"zorepro/pipeline/task"
	"zorepro/stages/audit"
	"zorepro/stages/plot"
)

// figure is one plot task's latest recorded output.
type figure struct {
	Name   string // the plot's "figure" parameter, e.g. fig2-linreg
	Task   string
	Output string
	Run    uint64
	Files  []pipeline.OutputEntry
	Images []string // the PNG entries
}

// figures lists the plan's plot tasks whose latest state recorded an
// output, in plan order.
func (s *Server) figures() ([]figure, error) {
	var out []figure
	for _, t := range s.eng.Plan.Tasks {
		if fx, ok := t.Runner.(pipeline.FigureExporter); !ok || !fx.ExportFigures() || t.Kind.Name() != "plot" {
			continue
		}
		st, ok, err := s.eng.Events.LastState(t.Path)
		if err != nil {
			return nil, err
		}
		if !ok || st.Output == "" {
			continue
		}
		name, _ := t.Params.Peek("figure")
		f := figure{Name: fmt.Sprint(name), Task: t.Path, Output: st.Output, Run: st.Run}
		if f.Files, err = s.eng.Manifest(st.Output); err != nil {
			return nil, err
		}
		for _, e := range f.Files {
			if strings.HasSuffix(e.Name, ".png") {
				f.Images = append(f.Images, e.Name)
			}
		}
		out = append(out, f)
	}
	return out, nil
}

func (s *Server) figure(name string) (*figure, error) {
	figs, err := s.figures()
	if err != nil {
		return nil, err
	}
	for i := range figs {
		if figs[i].Name == name {
			return &figs[i], nil
		}
	}
	return nil, fmt.Errorf("%w: no plot task of profile %s records a figure %q", ErrNotFound, s.opt.Profile, name)
}

func (s *Server) figuresPage(r *http.Request) (*view, error) {
	figs, err := s.figures()
	if err != nil {
		return nil, err
	}
	return &view{tmpl: "figures.html", title: "Figures", data: figs}, nil
}

type figureView struct {
	*figure
	Panels []panelView
	Points int
}

type panelView struct {
	Key   string
	Chart any
}

func (s *Server) figurePage(r *http.Request) (*view, error) {
	f, err := s.figure(r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	rows, err := s.figureRows(f)
	if err != nil {
		return nil, err
	}
	v := &figureView{figure: f, Points: len(rows)}
	var panels []string
	for _, rw := range rows {
		if !slices.Contains(panels, rw.Panel) {
			panels = append(panels, rw.Panel)
		}
	}
	for _, pk := range panels {
		c, style := s.axes(f)
		c.Title = f.Name
		if pk != "" {
			c.Title = style.panelTitle(pk)
		}
		var curves []string
		for _, rw := range rows {
			if rw.Panel == pk && !slices.Contains(curves, rw.Curve) {
				curves = append(curves, rw.Curve)
			}
		}
		for i, cv := range curves {
			sr := series{Name: cmp.Or(style.labels[cv], cv), Color: cmp.Or(style.colors[cv], palette[i%len(palette)]), Band: true}
			for _, rw := range rows {
				if rw.Panel != pk || rw.Curve != cv {
					continue
				}
				q := url.Values{"figure": {f.Name}, "panel": {rw.Panel}, "curve": {rw.Curve}, "x": {task.FormatFloat(rw.X)}}
				sr.Points = append(sr.Points, point{X: rw.X, Y: rw.Mean, Lo: rw.Lo, Hi: rw.Hi, Href: "/point?" + q.Encode(),
					Tip: fmt.Sprintf("%s at x = %s: mean %s over %d seeds", cv, task.FormatFloat(rw.X), task.FormatFloat(rw.Mean), rw.N)})
			}
			c.Series = append(c.Series, sr)
		}
		v.Panels = append(v.Panels, panelView{Key: pk, Chart: c.svg()})
	}
	return &view{tmpl: "figure.html", title: f.Name, data: v}, nil
}

// curveStyle is each curve's label and colour in the figure, and its
// panels' titles (the plot's panel_title with panel_labels).
type curveStyle struct {
	labels, colors, panels map[string]string
	title                  string // panel_title: "d = %s"; "" for none
}

// panelTitle is a panel's title as the figure draws it ("d = 10",
// "Swimmer-v2 (d/p = 8)"), or "panel KEY" where the plot gives none.
func (cs curveStyle) panelTitle(key string) string {
	if cs.title == "" || strings.Count(cs.title, "%s") != 1 {
		return "panel " + key
	}
	return strings.Replace(cs.title, "%s", cmp.Or(cs.panels[key], key), 1)
}

// axes are the figure's axis labels and scales and its curves' labels and
// colours, from its plot task's parameters.
func (s *Server) axes(f *figure) (chart, curveStyle) {
	c := chart{XLabel: "x", YLabel: "mean"}
	cs := curveStyle{labels: map[string]string{}, colors: map[string]string{}, panels: map[string]string{}}
	t := s.eng.Plan.Task(f.Task)
	if t == nil {
		return c, cs
	}
	for _, m := range []struct {
		param string
		dst   map[string]string
	}{{"labels", cs.labels}, {"colors", cs.colors}, {"panel_labels", cs.panels}} {
		sub, ok := t.Params.Sub(m.param)
		if !ok {
			continue
		}
		for _, k := range sub.Keys() {
			if v, ok := sub.Peek(k); ok {
				if str, ok := v.(string); ok {
					m.dst[k] = str
				}
			}
		}
	}
	for k, name := range cs.colors {
		cs.colors[k] = ""
		if col, ok := plot.Colors[name]; ok {
			r, g, b, _ := col.RGBA()
			cs.colors[k] = fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
		}
	}
	str := func(name, def string) string {
		if v, ok := t.Params.Peek(name); ok {
			if s, ok := v.(string); ok {
				return s
			}
		}
		return def
	}
	cs.title = str("panel_title", "")
	c.XLabel = str("x_label", str("x", "samples"))
	c.YLabel = str("y_label", str("y", "mean"))
	if v, ok := t.Params.Peek("log_x"); ok {
		c.LogX, _ = v.(bool)
	}
	if v, ok := t.Params.Peek("log_y"); ok {
		c.LogY, _ = v.(bool)
	}
	return c, cs
}

// figureRows reads the figure's plotted points (<figure>.csv).
func (s *Server) figureRows(f *figure) ([]plot.Row, error) {
	b, err := s.entry(f, f.Name+".csv")
	if err != nil {
		return nil, err
	}
	return plot.ReadCurvesCSV(b)
}

// entry reads one named file of a figure's output.
func (s *Server) entry(f *figure, name string) ([]byte, error) {
	for _, e := range f.Files {
		if e.Name == name {
			return s.eng.Store.Get(e.ID)
		}
	}
	return nil, fmt.Errorf("%w: %s's output %s has no %s", ErrNotFound, f.Task, f.Output, name)
}

// figureFile serves one file of a recorded figure output, by its name
// (e.g. fig2-linreg.png): never a path of the file system.
func (s *Server) figureFile(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	figs, err := s.figures()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	for _, f := range figs {
		for _, e := range f.Files {
			if e.Name != name {
				continue
			}
			b, err := s.eng.Store.Get(e.ID)
			if err != nil {
				s.fail(w, r, err)
				return
			}
			ct := map[string]string{".png": "image/png", ".svg": "image/svg+xml", ".csv": "text/csv; charset=utf-8", ".json": "application/json"}[path.Ext(name)]
			w.Header().Set("Content-Type", cmp.Or(ct, "application/octet-stream"))
			w.Write(b)
			return
		}
	}
	s.fail(w, r, fmt.Errorf("%w: no recorded figure output has a file %q", ErrNotFound, name))
}

type pointView struct {
	Figure    *figure
	Report    *audit.Report
	Point     *audit.Point
	X, Y      string
	Reexecute bool       // the server offers the re-execute button
	Query     url.Values // the point's selection, for the button's form
}

// pointPage is the audit trail of one plotted point: stages/audit's
// Figure with the selection `pipeline audit --x` makes.
func (s *Server) pointPage(r *http.Request) (*view, error) {
	f, rep, err := s.auditPoint(r.URL.Query())
	if err != nil {
		return nil, err
	}
	axes, _ := s.axes(f) // the figure's own axis labels (in final mode x is a coordinate, not rep.X)
	return &view{tmpl: "point.html", title: "A point of " + f.Name, data: pointView{Figure: f, Report: rep, Point: &rep.Points[0], X: axes.XLabel, Y: rep.Y,
		Reexecute: s.opt.AllowReexecute, Query: url.Values{"figure": {f.Name}, "panel": {r.URL.Query().Get("panel")}, "curve": {r.URL.Query().Get("curve")}, "x": {r.URL.Query().Get("x")}}}}, nil
}

// auditPoint audits the one point q selects (figure, panel, curve, x).
func (s *Server) auditPoint(q url.Values) (*figure, *audit.Report, error) {
	f, err := s.figure(q.Get("figure"))
	if err != nil {
		return nil, nil, err
	}
	svgName := f.Name + ".svg"
	var id store.ID
	for _, e := range f.Files {
		if e.Name == svgName {
			id = e.ID
		}
	}
	p, err := provenance.Produced(s.eng.Events, f.Task, f.Output)
	if err != nil {
		return nil, nil, err
	}
	src := &provenance.FigureSource{Production: p, Entry: svgName, ID: id}
	sel := audit.Selection{Panel: q.Get("panel"), Curve: q.Get("curve"), X: q.Get("x")}
	rep, err := audit.New(provenance.New(s.eng), s.eng.Events).Figure(svgName, src, sel)
	if errors.Is(err, audit.ErrSelection) {
		return nil, nil, fmt.Errorf("%w: %v", ErrNotFound, err)
	} else if err != nil {
		return nil, nil, err
	}
	if len(rep.Points) != 1 {
		return nil, nil, fmt.Errorf("%w: the selection %+v gives %d points of %s, not one", ErrNotFound, sel, len(rep.Points), f.Name)
	}
	return f, rep, nil
}
