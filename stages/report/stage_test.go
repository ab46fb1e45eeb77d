package report

import (
	"strings"
	"testing"

	"zorepro/pipeline/task"
)

// Every problem of every claim is reported at once, naming the claim and
// the field.
func TestClaimsValidation(t *testing.T) {
	good := map[string]any{"id": "a", "figure": "f", "section": "§1", "text": "t", "stat": "difference", "curves": []any{"x", "y"}, "expect": ">"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for a, b := range good {
			m[a] = b
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	claims := []any{
		good,
		with("stat", "mode"),
		with("id", nil),
		with("expect", nil),
		with("colour", "red"),
		map[string]any{"id": "c", "figure": "f", "section": "§1", "text": "t", "stat": "crossover", "curves": []any{"x", "y"}},
		with("at", "soon"),
		with("curves", []any{"x"}),
		"not a claim",
		good, // duplicate id
		with("id", "Bad Id"),
		// bound claims: the bound is required, its fields are checked by
		// name, and only < is a bound's side.
		map[string]any{"id": "b1", "figure": "f", "section": "§1", "text": "t", "stat": "bound", "curves": []any{"x"}, "expect": "<"},
		map[string]any{"id": "b2", "figure": "f", "section": "§1", "text": "t", "stat": "bound", "curves": []any{"x"}, "expect": "<",
			"bound": map[string]any{"coef": -1.0, "x_pow": "fast", "shape": 2}},
		map[string]any{"id": "b3", "figure": "f", "section": "§1", "text": "t", "stat": "bound", "curves": []any{"x"}, "expect": ">",
			"bound": map[string]any{"coef": 2.0}},
		with("bound", map[string]any{"coef": 2.0}),
		// a ratio claim states its threshold (0 would always pass)
		with("stat", "ratio"),
	}
	p := task.NewParams("dag.yaml", "report", map[string]any{"claims": claims})
	Kind{}.Plan(p)
	err := p.Err()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`params.claims[1].stat: "mode" is not one of`,
		`params.claims[2].id: missing`,
		`params.claims[3].expect: missing`,
		`params.claims[4].colour: unknown parameter`,
		`params.claims[5].between: missing`,
		`params.claims[6].at: "soon" is not last, common, matched or a finite number`,
		`params.claims[7].stat: statistic difference needs 2 curve(s), got 1`,
		`params.claims[8]: must be a mapping`,
		`params.claims[9].id: duplicate claim id "a"`,
		`params.claims[10].id: "Bad Id" must match`,
		`params.claims[11].bound: missing`,
		`params.claims[12].bound.coef: must be >= 0, got -1`,
		`params.claims[12].bound.x_pow: must be a number`,
		`params.claims[12].bound.shape: unknown parameter`,
		`params.claims[13].stat: a bound claim expects < and a positive finite bound coefficient`,
		`params.claims[14].bound: unknown parameter`,
		`params.claims[15].threshold: missing`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "claims[0]") {
		t.Errorf("the good claim is reported:\n%v", err)
	}
	empty := task.NewParams("dag.yaml", "report", map[string]any{"claims": []any{}})
	Kind{}.Plan(empty)
	if e := empty.Err(); e == nil || !strings.Contains(e.Error(), "must be a non-empty list of claims") {
		t.Errorf("empty claims: %v", e)
	}
}

// A profile's more_claims follow the stage's claims: decoded the same way,
// an id of either list not repeated in the other, each problem named as
// params.more_claims[i].field.
func TestMoreClaims(t *testing.T) {
	claim := func(id string) map[string]any {
		return map[string]any{"id": id, "figure": "f", "section": "§1", "text": "t", "stat": "difference", "curves": []any{"x", "y"}, "expect": ">"}
	}
	p := task.NewParams("dag.yaml", "report", map[string]any{"claims": []any{claim("a"), claim("b")}, "more_claims": []any{claim("c")}})
	if got := DecodeClaims(p); p.Err() != nil || len(got) != 3 || got[0].ID != "a" || got[2].ID != "c" {
		t.Fatalf("decoded %d claims, %v", len(got), p.Err())
	}
	bad := claim("d")
	delete(bad, "expect")
	p = task.NewParams("dag.yaml", "report", map[string]any{"claims": []any{claim("a")}, "more_claims": []any{claim("a"), bad}})
	DecodeClaims(p)
	for _, want := range []string{`params.more_claims[0].id: duplicate claim id "a"`, "params.more_claims[1].expect: missing"} {
		if err := p.Err(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	p = task.NewParams("dag.yaml", "report", map[string]any{"claims": []any{claim("a")}, "more_claims": claim("b")})
	if DecodeClaims(p); p.Err() == nil || !strings.Contains(p.Err().Error(), "params.more_claims: must be a list of claims") {
		t.Errorf("more_claims not a list: %v", p.Err())
	}
}

// figure_caps sets the cap of a figure's censored claims and the bound of
// its fractions (a profile whose runs stop earlier); other figures' claims
// and claims without a cap keep theirs; a figure no claim of which has one,
// or a cap that is not positive, is an error naming the field.
func TestFigureCaps(t *testing.T) {
	claims := []any{
		map[string]any{"id": "mean", "figure": "f", "section": "§1", "text": "t", "stat": "value", "curves": []any{"x"}, "cap": 100.0},
		map[string]any{"id": "conv", "figure": "f", "section": "§1", "text": "t", "stat": "fraction", "curves": []any{"x"}, "below": 100.0},
		map[string]any{"id": "plain", "figure": "f", "section": "§1", "text": "t", "stat": "value", "curves": []any{"x"}},
		map[string]any{"id": "other", "figure": "g", "section": "§1", "text": "t", "stat": "median", "curves": []any{"x"}, "cap": 100.0},
	}
	p := task.NewParams("dag.yaml", "report", map[string]any{"claims": claims, "figure_caps": map[string]any{"f": 2.0}})
	got := DecodeClaims(p)
	if p.Err() != nil || len(got) != 4 {
		t.Fatalf("decoded %d claims: %v", len(got), p.Err())
	}
	if got[0].Cap != 2 || got[1].Below != 2 || got[2].Cap != 0 || got[3].Cap != 100 {
		t.Errorf("caps: mean %v, conv below %v, plain %v, other %v; want 2, 2, 0, 100", got[0].Cap, got[1].Below, got[2].Cap, got[3].Cap)
	}
	// The claims whose cap moved say so beside their text (written for
	// the other cap); the others carry no note.
	for i, want := range []string{"stop at 2 in the figure's units, not at the 100", "stop at 2 in the figure's units, not at the 100", "", ""} {
		if note := got[i].CapNote; (want == "") != (note == "") || !strings.Contains(note, want) {
			t.Errorf("%s: cap note %q, want one with %q", got[i].ID, note, want)
		}
	}
	for _, c := range []struct {
		caps map[string]any
		want string
	}{
		{map[string]any{"h": 2.0}, `params.figure_caps.h: no claim about figure "h" has a cap`},
		{map[string]any{"f": 0.0}, "params.figure_caps.f: must be positive"},
	} {
		p := task.NewParams("dag.yaml", "report", map[string]any{"claims": claims, "figure_caps": c.caps})
		if DecodeClaims(p); p.Err() == nil || !strings.Contains(p.Err().Error(), c.want) {
			t.Errorf("figure_caps %v: %v, want %q", c.caps, p.Err(), c.want)
		}
	}
}

// The reference a report compares with is a path and a pinned SHA-256;
// each problem is named by its field.
func TestReferenceValidation(t *testing.T) {
	claims := []any{map[string]any{"id": "a", "figure": "f", "section": "§1", "text": "t", "stat": "difference", "curves": []any{"x", "y"}, "expect": ">"}}
	for _, c := range []struct {
		ref  any
		want []string
	}{
		{map[string]any{"sha256": "ab"}, []string{"params.reference.path: missing", `params.reference.sha256: must be 64 lower-case hex digits (sha256sum of the file), got "ab"`}},
		{map[string]any{"path": "", "sha256": strings.Repeat("A", 64), "colour": "red"}, []string{"params.reference.path: must not be empty", "params.reference.sha256: must be 64 lower-case hex", "params.reference.colour: unknown parameter"}},
		{"results/paper/claims.json", []string{"params.reference: must be a mapping"}},
	} {
		p := task.NewParams("dag.yaml", "report", map[string]any{"claims": claims, "reference": c.ref})
		Kind{}.Plan(p)
		err := p.Err()
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("reference %v: error lacks %q: %v", c.ref, w, err)
			}
		}
	}
	ok := task.NewParams("dag.yaml", "report", map[string]any{"claims": claims, "reference": map[string]any{"path": "x.json", "sha256": strings.Repeat("0a", 32)}})
	Kind{}.Plan(ok)
	if err := ok.Err(); err != nil {
		t.Errorf("a good reference: %v", err)
	}
}

// A scaling claim names each panel's value on its log-log x axis; each
// problem is named by its field.
func TestScalingClaimValidation(t *testing.T) {
	claim := func(px any) []any {
		m := map[string]any{"id": "s", "figure": "f", "section": "§1", "text": "t", "stat": "scaling", "curves": []any{"a", "b"}, "expect": "~", "threshold": 0.5}
		if px != nil {
			m["panel_x"] = px
		}
		return []any{m}
	}
	for _, c := range []struct {
		px   any
		want string
	}{
		{nil, "params.claims[0].panel_x: missing"},
		{map[string]any{"swimmer": 0.0}, "params.claims[0].panel_x.swimmer: must be positive"},
		{map[string]any{"swimmer": "eight"}, "params.claims[0].panel_x.swimmer: must be a number"},
		{[]any{8.0}, "params.claims[0].panel_x: must be a mapping"},
	} {
		p := task.NewParams("dag.yaml", "report", map[string]any{"claims": claim(c.px)})
		Kind{}.Plan(p)
		if err := p.Err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("panel_x %v: error %v, want %q", c.px, err, c.want)
		}
	}
	p := task.NewParams("dag.yaml", "report", map[string]any{"claims": claim(map[string]any{"swimmer": 8.0, "ant": 111.0})})
	if (Kind{}).Plan(p); p.Err() != nil {
		t.Errorf("a good scaling claim: %v", p.Err())
	}
}
