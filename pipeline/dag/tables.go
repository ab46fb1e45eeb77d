package dag

import (
	"fmt"
	"slices"
)

// Table is a top-level table of dag.yaml: named columns and one row per
// case, e.g. the published hyperparameters of Fig. 3, one row per (body,
// method, horizon). Stages read it through table_overrides, so a value
// is written once however many stages use it, and a new body adds rows,
// not blocks.
//
//	tables:
//	  fig3-published:
//	    columns: [name, method, horizon, alpha, directions, nu]
//	    rows:
//	      - [swimmer, arsv1, 1, 0.15, 5, 0.2]
type Table struct {
	Columns []string
	Rows    [][]any
}

// decodeTables reads the top-level "tables" mapping.
func decodeTables(c *collector, v any) map[string]Table {
	out := map[string]Table{}
	if v == nil {
		return out
	}
	m := asMap(v)
	if m == nil {
		c.add("", "tables", "must be a mapping of table name to {columns, rows}")
		return out
	}
	for _, name := range sortedKeys(m) {
		f := "tables." + name
		tm := asMap(m[name])
		if tm == nil {
			c.add("", f, "must be a mapping {columns, rows}")
			continue
		}
		for _, k := range sortedKeys(tm) {
			if k != "columns" && k != "rows" {
				c.add("", f+"."+k, "unknown field (known: columns, rows)")
			}
		}
		var t Table
		cols, ok := tm["columns"].([]any)
		if !ok || len(cols) == 0 {
			c.add("", f+".columns", "must be a non-empty list of column names")
		}
		for i, x := range cols {
			s, ok := x.(string)
			switch {
			case !ok || !keyRE.MatchString(s):
				c.add("", fmt.Sprintf("%s.columns[%d]", f, i), "column names must match %s", keyRE)
			case slices.Contains(t.Columns, s):
				c.add("", fmt.Sprintf("%s.columns[%d]", f, i), "duplicate column %q", s)
			}
			t.Columns = append(t.Columns, fmt.Sprint(x))
		}
		rows, ok := tm["rows"].([]any)
		if !ok || len(rows) == 0 {
			c.add("", f+".rows", "must be a non-empty list of rows, each a list of %d values", len(t.Columns))
		}
		for i, x := range rows {
			r, ok := x.([]any)
			if !ok || len(r) != len(t.Columns) {
				c.add("", fmt.Sprintf("%s.rows[%d]", f, i), "must be a list of %d values (%v), got %v", len(t.Columns), t.Columns, x)
				continue
			}
			for j, cell := range r {
				switch cell.(type) {
				case string, int, int64, float64, bool:
				default:
					c.add("", fmt.Sprintf("%s.rows[%d][%d]", f, i, j), "must be a number, a string or a boolean, got %v", cell)
				}
			}
			t.Rows = append(t.Rows, r)
		}
		out[name] = t
	}
	return out
}

// decodeTableOverrides reads a stage's table_overrides, a list of
// {table, match, set, into}, and returns one Override per row of each
// table: when the task's coordinates equal the row's match columns, the
// row's set columns become parameters (nested under into, when given).
// They apply after the stage's own overrides, in table and row order.
func decodeTableOverrides(c *collector, stage, field string, v any, tables map[string]Table) []Override {
	var out []Override
	eachMapping(c, stage, field, v, []string{"table", "match", "set", "into"}, func(f string, m map[string]any) {
		name, _ := m["table"].(string)
		t, ok := tables[name]
		if !ok {
			c.add(stage, f+".table", "no table %q (known: %v)", name, sortedKeys(tables))
			return
		}
		cols := func(key string) []int {
			l, ok := m[key].([]any)
			if !ok || len(l) == 0 {
				c.add(stage, f+"."+key, "must be a non-empty list of columns of table %q", name)
				return nil
			}
			var idx []int
			for j, x := range l {
				s, _ := x.(string)
				k := slices.Index(t.Columns, s)
				if k < 0 {
					c.add(stage, fmt.Sprintf("%s.%s[%d]", f, key, j), "table %q has no column %v (columns: %v)", name, x, t.Columns)
					continue
				}
				idx = append(idx, k)
			}
			return idx
		}
		match, set := cols("match"), cols("set")
		for _, k := range match {
			if slices.Contains(set, k) {
				c.add(stage, f+".set", "column %q is matched, not set", t.Columns[k])
			}
		}
		into, _ := m["into"].(string)
		if _, given := m["into"]; given && !keyRE.MatchString(into) {
			c.add(stage, f+".into", "parameter names must match %s", keyRE)
		}
		for r, row := range t.Rows {
			o := Override{When: map[string]string{}, Params: map[string]any{}, Field: fmt.Sprintf("%s (tables.%s.rows[%d])", f, name, r)}
			for _, k := range match {
				o.When[t.Columns[k]] = scalarText(row[k])
			}
			params := o.Params
			if into != "" {
				params = map[string]any{}
				o.Params[into] = params
			}
			for _, k := range set {
				params[t.Columns[k]] = row[k]
			}
			out = append(out, o)
		}
	})
	return out
}
