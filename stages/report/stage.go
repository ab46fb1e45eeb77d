package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"

	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Kind is the report stage kind: it takes the figures (plot tasks, slot
// "figures"), checks the claims its parameters declare against their
// per-seed numbers and writes claims.json, report.md and report.html.
type Kind struct{}

// Name implements task.Kind.
func (Kind) Name() string { return "report" }

// Version implements task.Kind.
func (Kind) Version() int { return 1 }

// Slots implements task.Kind.
func (Kind) Slots() []task.Slot {
	return []task.Slot{{Name: "figures", Required: true, Many: true}}
}

var idRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// claimFields are the keys of one claim in the stage's "claims" list.
var claimFields = []string{"id", "figure", "section", "text", "stat", "curves", "over", "panel", "keys", "at", "expect", "threshold", "tolerance", "between", "below"}

// Plan implements task.Kind. Every problem of every claim is reported,
// naming it as params.claims[i].field.
func (Kind) Plan(p *task.Params) task.Runner {
	return &runner{title: p.String("title", task.Default("Reproduction report")), claims: DecodeClaims(p)}
}

// DecodeClaims reads the "claims" list of a report stage's parameters,
// reporting every problem through p.
func DecodeClaims(p *task.Params) []Claim {
	var claims []Claim
	raw, ok := p.Raw("claims")
	list, isList := raw.([]any)
	if !ok || !isList || len(list) == 0 {
		p.Errorf("claims", "must be a non-empty list of claims")
		return nil
	}
	seen := map[string]bool{}
	for i, x := range list {
		m, isMap := x.(map[string]any)
		field := fmt.Sprintf("claims[%d]", i)
		if !isMap {
			p.Errorf(field, "must be a mapping (%s)", strings.Join(claimFields, ", "))
			continue
		}
		c, problems := decodeClaim(p, m)
		for _, pr := range problems {
			p.Errorf(field+"."+pr[0], "%s", pr[1])
		}
		if seen[c.ID] {
			p.Errorf(field+".id", "duplicate claim id %q", c.ID)
		}
		seen[c.ID] = true
		claims = append(claims, c)
	}
	return claims
}

// decodeClaim reads one claim, returning its problems as (field, message).
func decodeClaim(p *task.Params, m map[string]any) (Claim, [][2]string) {
	cp := task.NewParams(p.File(), p.Stage(), m)
	var c Claim
	c.ID = cp.String("id", task.Required())
	c.Figure = cp.String("figure", task.Required())
	c.Section = cp.String("section", task.Required())
	c.Text = cp.String("text", task.Required())
	c.Stat = Stat(cp.String("stat", task.Required(), task.OneOf(string(StatValue), string(StatDifference), string(StatRatio), string(StatOrder), string(StatCrossover), string(StatTrend), string(StatSlope),
		string(StatFraction), string(StatMedian), string(StatBest))))
	c.Curves = cp.Strings("curves", task.Required(), task.NonEmpty())
	c.Over = cp.String("over", task.Default("panel"), task.OneOf("panel", "x"))
	c.Panel = scalar(cp, "panel")
	if v, ok := cp.Raw("keys"); ok {
		l, _ := v.([]any)
		if len(l) == 0 {
			cp.Errorf("keys", "must be a non-empty list")
		}
		for _, k := range l {
			c.Keys = append(c.Keys, text(k))
		}
	}
	var problems [][2]string
	if at := scalar(cp, "at"); at != "" {
		a, err := ParseAt(at)
		if err != nil {
			problems = append(problems, [2]string{"at", err.Error()})
		}
		c.At = a
	}
	switch c.Stat {
	case StatValue, StatCrossover:
	case StatFraction, StatMedian: // reported unless a side is claimed
		if cp.Has("expect") {
			c.Expect = cp.String("expect", task.OneOf(">", "<", "~"))
		}
		c.Threshold = cp.Float("threshold", task.Default(0.0))
		c.Tolerance = cp.Float("tolerance", task.Default(0.0), task.Min(0))
	default:
		c.Expect = cp.String("expect", task.Required(), task.OneOf(">", "<", "~"))
		if c.Stat != StatBest {
			c.Threshold = cp.Float("threshold", task.Default(0.0))
			c.Tolerance = cp.Float("tolerance", task.Default(0.0), task.Min(0))
		}
	}
	if c.Stat == StatFraction {
		c.Below = cp.Float("below", task.Required())
	}
	if c.Stat == StatCrossover {
		switch b := cp.Floats("between", task.Required()); {
		case len(b) == 2 && b[0] <= b[1]:
			c.Between = [2]float64{b[0], b[1]}
		case cp.Has("between"):
			cp.Errorf("between", "must be [lo, hi] with lo <= hi")
		}
	}
	if c.ID != "" && !idRE.MatchString(c.ID) {
		problems = append(problems, [2]string{"id", fmt.Sprintf("%q must match %s", c.ID, idRE)})
	}
	for _, e := range cp.Problems() {
		var te *task.Error
		if errors.As(e, &te) {
			problems = append(problems, [2]string{strings.TrimPrefix(te.Field, "params."), te.Msg})
		} else {
			problems = append(problems, [2]string{"", e.Error()})
		}
	}
	if len(problems) == 0 {
		if err := c.check(); err != nil {
			problems = append(problems, [2]string{"stat", err.Error()})
		}
	}
	return c, problems
}

// scalar reads an optional scalar parameter as text ("" when absent).
func scalar(p *task.Params, name string) string {
	v, ok := p.Raw(name)
	if !ok {
		return ""
	}
	return text(v)
}

func text(v any) string {
	switch x := v.(type) {
	case float64:
		return task.FormatFloat(x)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

type runner struct {
	title  string
	claims []Claim
}

func (r *runner) Components() []any { return nil }

// ExportFigures marks the outputs (the report) as files to export.
func (r *runner) ExportFigures() bool { return true }

// Figure is one input figure: its name (the files' stem), its plot task
// and the IDs of its files.
type Figure struct {
	Name  string            `json:"name"`
	Task  string            `json:"task"`
	Files map[string]string `json:"files"` // file name → content ID
	svg   []byte
	table Table
}

func (r *runner) Run(ctx context.Context, env task.Env) error {
	var figs []*Figure
	for _, in := range env.Inputs("figures") {
		for _, name := range in.Names() {
			stem, ok := strings.CutSuffix(name, "-seeds.csv")
			if !ok {
				continue
			}
			f := &Figure{Name: stem, Task: in.Task(), Files: map[string]string{}}
			for _, n := range in.Names() {
				f.Files[n] = in.ID(n)
			}
			data, err := in.Read(name)
			if err != nil {
				return err
			}
			if f.table, err = ParseSeedsCSV(data); err != nil {
				return fmt.Errorf("%s %s: %w", in.Task(), name, err)
			}
			if f.svg, err = in.Read(stem + ".svg"); err != nil {
				return err
			}
			figs = append(figs, f)
		}
	}
	byName := map[string]*Figure{}
	var names []string
	for _, f := range figs {
		byName[f.Name] = f
		names = append(names, f.Name)
	}
	src := env.Streams()
	results := make([]Result, len(r.claims))
	for i, c := range r.claims {
		f := byName[c.Figure]
		if f == nil {
			return fmt.Errorf("claim %s: no input figure %q (the figures are %s)", c.ID, c.Figure, strings.Join(names, ", "))
		}
		results[i] = Evaluate(c, f.table, ClaimStream(src, c))
	}
	doc := newDocument(r.title, figs, results)
	js, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	for _, o := range []struct {
		name string
		data []byte
	}{{"claims.json", append(js, '\n')}, {"report.md", doc.Markdown()}, {"report.html", doc.HTML(figs)}} {
		if err := env.Output(o.name, o.data); err != nil {
			return err
		}
	}
	env.Logf("%d claims: %s", len(results), doc.countsText())
	return nil
}

// Counts of verdicts, in a fixed order.
var verdictOrder = []Verdict{Holds, Fails, Inconclusive, Reported}

func (d *Document) countsText() string {
	var parts []string
	for _, v := range verdictOrder {
		if n := d.Counts[string(v)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
		}
	}
	return strings.Join(parts, ", ")
}

// ClaimStream is the stream a claim's bootstrap draws from: "claim/<id>"
// of the report task's streams (so that pipeline audit can redraw it).
func ClaimStream(src stream.Source, c Claim) *rand.Rand { return src.Rand("claim/" + c.ID) }
