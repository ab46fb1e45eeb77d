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
	Edges []string
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
func gridEdges(table []byte, scoreName string, ch *chosenjson.Chosen) ([]string, error) {
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
	var edges []string
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
			edges = append(edges, fmt.Sprintf("%s=%s is the smallest of %d", axis, text(v), len(vals)))
		case slices.Max(vals):
			edges = append(edges, fmt.Sprintf("%s=%s is the largest of %d", axis, text(v), len(vals)))
		}
	}
	return edges, nil
}

// hyperparameters describes where a figure's hyperparameters come from:
// each tune task of its stage with its chosen point and score, or the
// note ("" if the report's parameters say nothing of the figure).
func hyperparameters(fig string, tunings []Tuning, all []chosen) (string, error) {
	var parts []string
	for _, t := range tunings {
		if t.Figure != fig {
			continue
		}
		if t.Note != "" {
			parts = append(parts, t.Note)
			continue
		}
		var points []string
		for _, c := range all {
			rest, ok := strings.CutPrefix(c.Task, t.Stage+"/")
			if !ok && c.Task != t.Stage || t.Where != "" && !slices.Contains(strings.Split(rest, "/"), t.Where) {
				continue
			}
			p := fmt.Sprintf("%s: %s (score %s", rest, keyValues(c.Params), num(float64(c.Score)))
			if len(c.Edges) > 0 {
				p += "; at its grid's edge: " + strings.Join(c.Edges, ", ")
			}
			if len(c.Carried) > 0 {
				p += fmt.Sprintf("; %s carried from %s", keyValues(c.Carried), c.CarriedFrom)
			}
			points = append(points, p+")")
		}
		if len(points) == 0 {
			return "", fmt.Errorf("tuning of %s: no task of %s is bound to the report's \"tuned\" slot", fig, t.Stage)
		}
		parts = append(parts, fmt.Sprintf("tuned by %s, %s", t.Stage, strings.Join(points, "; ")))
	}
	return strings.Join(parts, "; "), nil
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
