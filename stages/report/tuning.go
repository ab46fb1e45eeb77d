package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"zorepro/pipeline/task"
	"zorepro/stages/tune/chosenjson"
)

// Tuning says where one figure's hyperparameters come from: the tune stage
// whose chosen points its curves were trained with, or, where training
// does not take them, a note saying what it uses instead.
type Tuning struct {
	Figure string
	Stage  string // e.g. "tune/linreg" ("" with a note)
	Where  string // a coordinate its tasks must have, e.g. "name=swimmer" ("": all)
	Note   string
}

// decodeTuning reads the stage's optional "tuning" list, reporting every
// problem through p as params.tuning[i].field.
func decodeTuning(p *task.Params) []Tuning {
	raw, ok := p.Raw("tuning")
	if !ok {
		return nil
	}
	list, isList := raw.([]any)
	if !isList {
		p.Errorf("tuning", "must be a list of {figure, stage} or {figure, note}")
		return nil
	}
	var out []Tuning
	for i, x := range list {
		field := fmt.Sprintf("tuning[%d]", i)
		m, isMap := x.(map[string]any)
		if !isMap {
			p.Errorf(field, "must be a mapping (figure, and stage or note)")
			continue
		}
		tp := task.NewParams(p.File(), p.Stage(), m)
		t := Tuning{Figure: tp.String("figure", task.Required()), Stage: tp.String("stage", task.Default("")),
			Where: tp.String("where", task.Default("")), Note: tp.String("note", task.Default(""))}
		if (t.Stage == "") == (t.Note == "") {
			p.Errorf(field, "give exactly one of stage and note")
		}
		for _, pr := range subProblems(tp) {
			p.Errorf(entryField(field, pr[0]), "%s", pr[1])
		}
		out = append(out, t)
	}
	return out
}

// chosen is one tune task's choice, as its chosen.json records it.
type chosen struct {
	Task string
	*chosenjson.Chosen
	// Edges names each tuned value that is the smallest or largest of its
	// grid axis (gridEdges): the best point may lie beyond the grid.
	Edges []gridEdge
}

// gridEdge is a tuned value at the smallest or largest of its grid axis.
type gridEdge struct {
	Axis    string
	Value   float64
	Largest bool
	Of      int // the axis's number of values
}

// String is the edge as the provenance's text says it, e.g. "alpha=0.02 is
// the largest of 4".
func (g gridEdge) String() string {
	return g.Axis + "=" + text(g.Value) + " is the " + g.short()
}

// short is the edge without its axis and value: "largest of 4".
func (g gridEdge) short() string {
	if g.Largest {
		return fmt.Sprintf("largest of %d", g.Of)
	}
	return fmt.Sprintf("smallest of %d", g.Of)
}

// readChosen reads the choice of every tune task bound to the "tuned"
// slot, in input order.
func readChosen(env task.Env) ([]chosen, error) {
	var out []chosen
	for _, in := range env.Inputs("tuned") {
		data, err := in.Read("chosen.json")
		if err != nil {
			return nil, err
		}
		ch, err := chosenjson.Parse(data)
		if err != nil {
			return nil, fmt.Errorf("%s chosen.json: %w", in.Task(), err)
		}
		c := chosen{Task: in.Task(), Chosen: ch}
		table, err := in.Read("table.csv")
		if err != nil {
			return nil, err
		}
		if c.Edges, err = gridEdges(table, c.ScoreName, c.Chosen); err != nil {
			return nil, fmt.Errorf("%s table.csv: %w", in.Task(), err)
		}
		out = append(out, c)
	}
	return out, nil
}

// gridEdges reads a tune task's table.csv (point, the grid's axes,
// mean_SCORE, ...) and names each axis of at least three numeric values
// whose chosen value is its smallest or largest, e.g. "alpha=0.005 is the
// smallest of 5": a choice at the edge of its grid says the best value may
// lie beyond it, so a reader should know.
func gridEdges(table []byte, scoreName string, ch *chosenjson.Chosen) ([]gridEdge, error) {
	rows, err := csv.NewReader(bytes.NewReader(table)).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no header")
	}
	end := slices.Index(rows[0], "mean_"+scoreName)
	if end < 1 || rows[0][0] != "point" {
		return nil, fmt.Errorf("header %q lacks point ... mean_%s", strings.Join(rows[0], ","), scoreName)
	}
	var edges []gridEdge
	for col := 1; col < end; col++ {
		axis := rows[0][col]
		v, isNum := ch.Number(axis)
		if !isNum {
			continue
		}
		var vals []float64
		for _, r := range rows[1:] {
			x, err := strconv.ParseFloat(r[col], 64)
			if err != nil {
				vals = nil // not a numeric axis
				break
			}
			if !slices.Contains(vals, x) {
				vals = append(vals, x)
			}
		}
		if len(vals) < 3 {
			continue
		}
		switch v {
		case slices.Min(vals):
			edges = append(edges, gridEdge{Axis: axis, Value: v, Of: len(vals)})
		case slices.Max(vals):
			edges = append(edges, gridEdge{Axis: axis, Value: v, Largest: true, Of: len(vals)})
		}
	}
	return edges, nil
}

// hyperSource is one source of a figure's hyperparameters: the chosen
// points of a tune stage's tasks, or a note saying what the figure uses
// instead.
type hyperSource struct {
	Stage  string // "" with a note
	Note   string
	Points []chosen // the stage's tasks, in input order
}

// hyperSources finds where a figure's hyperparameters come from: each tune
// task of its stage (with the coordinate Where asks for), or the note; nil
// if the report's parameters say nothing of the figure.
func hyperSources(fig string, tunings []Tuning, all []chosen) ([]hyperSource, error) {
	var out []hyperSource
	for _, t := range tunings {
		if t.Figure != fig {
			continue
		}
		if t.Note != "" {
			out = append(out, hyperSource{Note: t.Note})
			continue
		}
		src := hyperSource{Stage: t.Stage}
		for _, c := range all {
			rest, ok := strings.CutPrefix(c.Task, t.Stage+"/")
			if !ok && c.Task != t.Stage || t.Where != "" && !slices.Contains(strings.Split(rest, "/"), t.Where) {
				continue
			}
			src.Points = append(src.Points, c)
		}
		if len(src.Points) == 0 {
			return nil, fmt.Errorf("tuning of %s: no task of %s is bound to the report's \"tuned\" slot", fig, t.Stage)
		}
		out = append(out, src)
	}
	return out, nil
}

// coords is a chosen point's task name below its stage, e.g.
// "horizon=30/method=exact/name=swimmer" (the whole name for a stage's
// only task).
func (s hyperSource) coords(c chosen) string {
	rest, _ := strings.CutPrefix(c.Task, s.Stage+"/")
	return rest
}

// coordinates splits a chosen point's coordinates into their keys and
// values ("horizon", "30"; ...), skipping any segment without "=".
func (s hyperSource) coordinates(c chosen) (keys, vals []string) {
	for _, seg := range strings.Split(s.coords(c), "/") {
		if k, v, ok := strings.Cut(seg, "="); ok {
			keys, vals = append(keys, k), append(vals, v)
		}
	}
	return keys, vals
}

// hyperText is the sources as one sentence, as claims.json and the
// markdown report give them: each tune task with its chosen point and
// score (and, where so, its grid edges and what it carried), and the
// notes.
func hyperText(srcs []hyperSource) string {
	var parts []string
	for _, s := range srcs {
		if s.Note != "" {
			parts = append(parts, s.Note)
			continue
		}
		var points []string
		for _, c := range s.Points {
			p := fmt.Sprintf("%s: %s (score %s", s.coords(c), keyValues(c.Params), num(float64(c.Score)))
			if len(c.Edges) > 0 {
				edges := make([]string, len(c.Edges))
				for i, g := range c.Edges {
					edges[i] = g.String()
				}
				p += "; at its grid's edge: " + strings.Join(edges, ", ")
			}
			if len(c.Carried) > 0 {
				p += fmt.Sprintf("; %s carried from %s", keyValues(c.Carried), c.CarriedFrom)
			}
			points = append(points, p+")")
		}
		parts = append(parts, fmt.Sprintf("tuned by %s, %s", s.Stage, strings.Join(points, "; ")))
	}
	return strings.Join(parts, "; ")
}

// hyperparameters describes where a figure's hyperparameters come from
// in one sentence (hyperSources, hyperText).
func hyperparameters(fig string, tunings []Tuning, all []chosen) (string, error) {
	srcs, err := hyperSources(fig, tunings, all)
	return hyperText(srcs), err
}

// keyValues writes a JSON object's entries as "k=v, ..." in key order.
func keyValues(m map[string]json.RawMessage) string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		var v any
		json.Unmarshal(m[k], &v) // Parse checked it is JSON
		kv = append(kv, k+"="+text(v))
	}
	return strings.Join(kv, ", ")
}

// table lays a tune stage's chosen points out one row each: the task's
// coordinates, the chosen values (carried ones among them), the mean
// score, and, where any point has one, the axes at their grid's edge, the
// values an edge extension added with where its search stopped, and what
// was carried from where.
func (s hyperSource) table() (header []string, rows [][]string) {
	var coordKeys, paramKeys []string
	var edges, searched, carried bool
	scoreNames := map[string]bool{}
	for _, c := range s.Points {
		keys, _ := s.coordinates(c)
		for _, k := range keys {
			if !slices.Contains(coordKeys, k) {
				coordKeys = append(coordKeys, k)
			}
		}
		for k := range c.Params {
			if !slices.Contains(paramKeys, k) {
				paramKeys = append(paramKeys, k)
			}
		}
		edges = edges || len(c.Edges) > 0
		searched = searched || c.Search != nil && c.Search.Rounds > 0
		carried = carried || len(c.Carried) > 0
		scoreNames[c.ScoreName] = true
	}
	slices.Sort(paramKeys)
	score := "score"
	if names := slices.Collect(maps.Keys(scoreNames)); len(names) == 1 && names[0] != "" {
		score = "mean " + names[0]
	}
	header = append(append(append(header, coordKeys...), paramKeys...), score)
	if edges {
		header = append(header, "at its grid's edge")
	}
	if searched {
		header = append(header, "edge extension")
	}
	// Where every carrying point carries the same values from a task of
	// the same stage, the header names them and the stage, and a cell the
	// task's coordinates.
	carriedHead, carriedStage := "carried from", ""
	if carried {
		var keys string
		uniform := true
		for _, c := range s.Points {
			if len(c.Carried) == 0 {
				continue
			}
			k, st := strings.Join(slices.Sorted(maps.Keys(c.Carried)), ", "), stageOf(c.CarriedFrom)
			if carriedStage == "" {
				keys, carriedStage = k, st
			}
			uniform = uniform && k == keys && st == carriedStage && st != c.CarriedFrom
		}
		if uniform {
			carriedHead = keys + " carried from " + carriedStage
		} else {
			carriedStage = ""
		}
		header = append(header, carriedHead)
	}
	for _, c := range s.Points {
		keys, vals := s.coordinates(c)
		row := make([]string, 0, len(header))
		for _, k := range coordKeys {
			v := ""
			if i := slices.Index(keys, k); i >= 0 {
				v = vals[i]
			}
			row = append(row, v)
		}
		for _, k := range paramKeys {
			v := ""
			if raw, ok := c.Params[k]; ok {
				var x any
				json.Unmarshal(raw, &x) // Parse checked it is JSON
				v = text(x)
			}
			row = append(row, v)
		}
		row = append(row, num(float64(c.Score)))
		if edges {
			var parts []string
			for _, g := range c.Edges {
				parts = append(parts, g.Axis+": "+g.short())
			}
			row = append(row, strings.Join(parts, "; "))
		}
		if searched {
			row = append(row, searchText(c.Search))
		}
		if carried {
			v := ""
			switch {
			case len(c.Carried) == 0:
			case carriedStage != "":
				v = strings.TrimPrefix(c.CarriedFrom, carriedStage+"/")
			default:
				v = strings.Join(slices.Sorted(maps.Keys(c.Carried)), ", ") + " from " + c.CarriedFrom
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	return header, rows
}

// searchText says what a tune task's edge extension added and where it
// stopped ("" when it ran no round).
func searchText(s *chosenjson.Search) string {
	if s == nil || s.Rounds == 0 {
		return ""
	}
	var axes []string
	added := map[string][]string{}
	for _, e := range s.Extended {
		if _, ok := added[e.Axis]; !ok {
			axes = append(axes, e.Axis)
		}
		var v any
		json.Unmarshal(e.Value, &v) // Parse checked it is JSON
		added[e.Axis] = append(added[e.Axis], text(v))
	}
	parts := make([]string, len(axes))
	for i, a := range axes {
		parts[i] = a + " = " + strings.Join(added[a], ", ")
	}
	return fmt.Sprintf("added %s; %s", strings.Join(parts, "; "), strings.TrimPrefix(s.Stopped, "the chosen point is "))
}

// summary counts a tune stage's chosen points, those at an edge of their
// grid and those whose search was extended beyond one, e.g. "40 chosen
// points, 12 at a grid edge, 5 after an edge extension".
func (s hyperSource) summary() string {
	var edge, extended int
	for _, c := range s.Points {
		if len(c.Edges) > 0 {
			edge++
		}
		if c.Search != nil && c.Search.Rounds > 0 {
			extended++
		}
	}
	out := fmt.Sprintf("%d chosen point", len(s.Points))
	if len(s.Points) != 1 {
		out += "s"
	}
	if edge > 0 {
		out += fmt.Sprintf(", %d at a grid edge", edge)
	}
	if extended > 0 {
		out += fmt.Sprintf(", %d after an edge extension", extended)
	}
	return out
}

// stageOf is a task name's stage: its segments before the first
// coordinate ("tune/mujoco" of "tune/mujoco/horizon=15/method=exact").
func stageOf(taskName string) string {
	segs := strings.Split(taskName, "/")
	i := slices.IndexFunc(segs, func(s string) bool { return strings.Contains(s, "=") })
	if i < 0 {
		return taskName
	}
	return strings.Join(segs[:i], "/")
}
