package report

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"

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
	// "tuned": the tune tasks whose choices the figures' provenance names
	// (optional; params.tuning says which figure took which stage's).
	return []task.Slot{{Name: "figures", Required: true, Many: true}, {Name: "tuned", Many: true}}
}

var idRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// claimFields are the keys of one claim in the stage's "claims" list.
var claimFields = []string{"id", "figure", "section", "text", "stat", "curves", "over", "panel", "keys", "at", "measure", "expect", "threshold", "tolerance", "between", "below", "winner", "cap", "source", "bound", "test", "premise", "note", "panel_x", "x_label"}

// Plan implements task.Kind. Every problem of every claim is reported,
// naming it as params.claims[i].field.
func (Kind) Plan(p *task.Params) task.Runner {
	r := &runner{title: p.String("title", task.Default("Reproduction report")), claims: DecodeClaims(p)}
	// The scale the report states at its top: the profile it was made
	// under (set by each profile) and what that profile runs.
	r.scale.Profile = p.String("profile", task.Default("paper"))
	r.scale.Paper = p.Bool("paper_scale", task.Default(r.scale.Profile == "paper"))
	r.scale.Text = p.String("scale", task.Default(""))
	// Figures this project added (not the paper's), marked as such.
	if p.Has("extensions") {
		r.extensions = p.Strings("extensions")
	}
	r.tuning = decodeTuning(p)
	r.untested = decodeUntested(p)
	r.reference = decodeReference(p)
	return r
}

// Reference is another run's report this one sets its verdicts beside
// (the tuned run's, for the published-hyperparameter profile): a
// claims.json in the repository, pinned by its SHA-256 so that the
// report's identity covers its content.
type Reference struct {
	Path   string // relative to the pipeline's working directory, the repository root
	SHA256 string // lower-case hex
	Name   string // what the report calls it, e.g. "the tuned run (results/paper)"
}

var sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// decodeReference reads the optional "reference" mapping {path, sha256,
// name}.
func decodeReference(p *task.Params) *Reference {
	rp, ok := p.Sub("reference")
	if !ok {
		return nil
	}
	ref := &Reference{Path: rp.String("path", task.Required()), SHA256: rp.String("sha256", task.Required())}
	ref.Name = rp.String("name", task.Default(ref.Path))
	if rp.Has("path") && ref.Path == "" {
		rp.Errorf("path", "must not be empty")
	}
	if rp.Has("sha256") && !sha256RE.MatchString(ref.SHA256) {
		rp.Errorf("sha256", "must be 64 lower-case hex digits (sha256sum of the file), got %q", ref.SHA256)
	}
	return ref
}

// read reads the reference's claims.json and checks it against its pin.
func (ref *Reference) read() (Published, error) {
	data, err := os.ReadFile(ref.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return Published{}, fmt.Errorf("params.reference.path: %s: no such file (the report compares its verdicts with it; run from the repository root)", ref.Path)
	}
	if err != nil {
		return Published{}, fmt.Errorf("params.reference.path: %w", err)
	}
	if sum := fmt.Sprintf("%x", sha256.Sum256(data)); sum != ref.SHA256 {
		return Published{}, fmt.Errorf("params.reference.sha256: %s has sha256 %s, the dag pins %s (republished? pin the new digest)", ref.Path, sum, ref.SHA256)
	}
	pub, err := ParseClaims(ref.Path, data)
	if err != nil {
		return Published{}, fmt.Errorf("params.reference.path: %w", err)
	}
	return pub, nil
}

// decodeUntested reads the "untested" list: sentences of the paper no
// claim tests, each with its section and what would test it.
func decodeUntested(p *task.Params) []Untested {
	raw, ok := p.Raw("untested")
	if !ok {
		return nil
	}
	list, isList := raw.([]any)
	if !isList {
		p.Errorf("untested", "must be a list of {section, text, why}")
		return nil
	}
	var out []Untested
	for i, x := range list {
		field := fmt.Sprintf("untested[%d]", i)
		m, isMap := x.(map[string]any)
		if !isMap {
			p.Errorf(field, "must be a mapping (section, text, why)")
			continue
		}
		up := task.NewParams(p.File(), p.Stage(), m)
		u := Untested{Section: up.String("section", task.Required()), Text: up.String("text", task.Required()), Why: up.String("why", task.Required())}
		for _, pr := range subProblems(up) {
			p.Errorf(entryField(field, pr[0]), "%s", pr[1])
		}
		out = append(out, u)
	}
	return out
}

// DecodeClaims reads the "claims" list of a report stage's parameters,
// then the optional "more_claims" a profile adds to it without restating
// it (the quick profile's reduced crossover experiment beside the paper's
// claims), reporting every problem through p as params.claims[i].field or
// params.more_claims[i].field.
func DecodeClaims(p *task.Params) []Claim {
	raw, ok := p.Raw("claims")
	list, isList := raw.([]any)
	if !ok || !isList || len(list) == 0 {
		p.Errorf("claims", "must be a non-empty list of claims")
		return nil
	}
	seen := map[string]bool{}
	claims := decodeClaimList(p, "claims", list, seen)
	if raw, ok := p.Raw("more_claims"); ok {
		more, isList := raw.([]any)
		if !isList {
			p.Errorf("more_claims", "must be a list of claims")
			return claims
		}
		claims = append(claims, decodeClaimList(p, "more_claims", more, seen)...)
	}
	applyFigureCaps(p, claims)
	return claims
}

// applyFigureCaps reads the optional "figure_caps": a profile whose runs
// of a figure stop at another cap than its claims were written for (the
// smoke profile's LQR runs stop at 2·10^4 samples, Fig. 3c's claims at
// 10^6) gives that figure's cap, in the figure's y units, and it becomes
// the cap of each of the figure's claims that has one (a run there is
// censored) and the bound of each of its fractions (a run below it
// converged within the cap).
func applyFigureCaps(p *task.Params, claims []Claim) {
	caps, ok := p.Sub("figure_caps")
	if !ok {
		return
	}
	for _, fig := range caps.Keys() {
		v := caps.Float(fig, task.Required())
		if !(v > 0) {
			caps.Errorf(fig, "must be positive (a cap on the figure's y), got %v", v)
			continue
		}
		n := 0
		for i := range claims {
			c := &claims[i]
			switch {
			case c.Figure != fig:
			case c.Stat == StatFraction:
				c.CapNote = capNote(c.Below, v)
				c.Below, n = v, n+1
			case c.Cap > 0:
				c.CapNote = capNote(c.Cap, v)
				c.Cap, n = v, n+1
			}
		}
		if n == 0 {
			caps.Errorf(fig, "no claim about figure %q has a cap or a fraction's bound to set", fig)
		}
	}
}

// capNote says that a profile's runs stop at cap, not at was, the cap the
// claim's text was written for (both in the figure's y units); "" where
// they are the same.
func capNote(was, cap float64) string {
	if was == cap {
		return ""
	}
	return fmt.Sprintf("this profile's runs stop at %s in the figure's units, not at the %s this sentence was written for: every statistic here uses %[1]s",
		num(cap), num(was))
}

// decodeClaimList reads the claims of one list parameter (name), naming
// a duplicate of any id in seen.
func decodeClaimList(p *task.Params, name string, list []any, seen map[string]bool) []Claim {
	var claims []Claim
	for i, x := range list {
		m, isMap := x.(map[string]any)
		field := fmt.Sprintf("%s[%d]", name, i)
		if !isMap {
			p.Errorf(field, "must be a mapping (%s)", strings.Join(claimFields, ", "))
			continue
		}
		c, problems := decodeClaim(p, m)
		for _, pr := range problems {
			p.Errorf(entryField(field, pr[0]), "%s", pr[1])
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
		string(StatFraction), string(StatMedian), string(StatBest), string(StatIncrease), string(StatGrowth), string(StatBound), string(StatScaling))))
	c.Measure = cp.String("measure", task.Default(MeasureValue), task.OneOf(MeasureValue, MeasureLogAUC))
	c.Source = cp.String("source", task.Default("paper"), task.OneOf("paper", "project"))
	c.Cap = cp.Float("cap", task.Default(0.0), task.Min(0))
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
	case StatFraction, StatMedian, StatSlope: // reported unless a side is claimed
		if cp.Has("expect") {
			c.Expect = cp.String("expect", task.OneOf(">", "<", "~"))
		}
		c.Threshold = cp.Float("threshold", task.Default(0.0))
		c.Tolerance = cp.Float("tolerance", task.Default(0.0), task.Min(0))
	default:
		c.Expect = cp.String("expect", task.Required(), task.OneOf(">", "<", "~"))
		if c.Stat != StatBest && c.Stat != StatIncrease {
			threshold := task.Default(0.0)
			if c.Stat == StatRatio { // a ratio of positive means always exceeds 0: the claim states its side
				threshold = task.Required()
			}
			c.Threshold = cp.Float("threshold", threshold)
			c.Tolerance = cp.Float("tolerance", task.Default(0.0), task.Min(0))
		}
	}
	if c.Stat == StatBest {
		c.Winner = cp.String("winner", task.Required())
	}
	if c.Stat == StatFraction {
		c.Below = cp.Float("below", task.Required())
	}
	if c.Stat == StatScaling {
		c.XLabel = cp.String("x_label", task.Default("x"))
		if px, ok := cp.Sub("panel_x", task.Required()); ok {
			c.PanelX = map[string]float64{}
			for _, k := range px.Keys() {
				c.PanelX[k] = px.Float(k, task.Required(), task.Min(0))
				if !(c.PanelX[k] > 0) {
					px.Errorf(k, "must be positive (a log-log axis), got %v", c.PanelX[k])
				}
			}
		}
	}
	c.Note = cp.String("note", task.Default(""))
	if cp.Has("test") {
		c.Test = cp.String("test", task.OneOf(TestInterval, TestSign))
		if c.Test == TestSign && c.Stat != StatDifference && c.Stat != StatOrder {
			cp.Errorf("test", "the sign test is the primary statistic of difference and order claims only, not %s", c.Stat)
		}
	}
	if pp, ok := cp.Sub("premise"); ok {
		c.Premise.Text = pp.String("text", task.Required())
		switch w := pp.Floats("ratio_within", task.Required()); {
		case len(w) == 2 && w[0] < w[1]:
			c.Premise.RatioWithin = [2]float64{w[0], w[1]}
		case pp.Has("ratio_within"):
			pp.Errorf("ratio_within", "must be [lo, hi] with lo < hi")
		}
		if len(c.Curves) < 2 {
			cp.Errorf("premise", "a ratio premise needs two curves")
		}
	}
	if c.Stat == StatBound {
		c.Bound = decodeBound(cp)
		if !cp.Has("threshold") {
			c.Threshold = 1
		}
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
	problems = append(problems, subProblems(cp)...)
	if len(problems) == 0 {
		if err := c.check(); err != nil {
			problems = append(problems, [2]string{"stat", err.Error()})
		}
	}
	return c, problems
}

// subProblems returns the problems of parameters decoded from one entry of
// a list (a claim, a tuning) as (field within the entry, message), so that
// the caller names them once, under the entry's own field.
func subProblems(sub *task.Params) [][2]string {
	var out [][2]string
	for _, e := range sub.Problems() {
		var te *task.Error
		if errors.As(e, &te) {
			out = append(out, [2]string{strings.TrimPrefix(te.Field, "params."), te.Msg})
		} else {
			out = append(out, [2]string{"", e.Error()})
		}
	}
	return out
}

// entryField names a field within a list entry ("claims[2]" and "id" give
// "claims[2].id"; an empty field, the entry itself).
func entryField(entry, field string) string {
	if field == "" {
		return entry
	}
	return entry + "." + field
}

// decodeBound reads a bound claim's "bound" mapping (coef, panel_add,
// panel_pow, x_pow); its problems are named bound.<field>.
func decodeBound(cp *task.Params) Bound {
	bp, ok := cp.Sub("bound", task.Required())
	if !ok {
		return Bound{}
	}
	return Bound{
		Coef:     bp.Float("coef", task.Required(), task.Min(0)),
		PanelAdd: bp.Float("panel_add", task.Default(0.0)),
		PanelPow: bp.Float("panel_pow", task.Default(0.0)),
		XPow:     bp.Float("x_pow", task.Default(0.0)),
	}
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
	title      string
	claims     []Claim
	untested   []Untested
	scale      Scale
	extensions []string
	tuning     []Tuning
	reference  *Reference
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
	// Extension marks a figure this project added to the paper's.
	Extension bool `json:"extension,omitempty"`
	// Curves are each curve's seeds and the x range it covers.
	Curves []CurveScale `json:"curves"`
	// Hyper says where its hyperparameters come from (Tuning).
	Hyper string        `json:"hyperparameters,omitempty"`
	hyper []hyperSource // Hyper's sources, for the pages' tables
	svg   []byte
	views [][]byte // the companion views the plot made, by companionViews (nil: not made)
	table Table
}

// CurveScale is the scale one curve of a figure was made at: its seeds
// (in every panel) and the smallest and largest x it reaches.
type CurveScale struct {
	Curve string   `json:"curve"`
	Seeds []uint64 `json:"seeds"`
	XMin  float64  `json:"x_min"`
	XMax  float64  `json:"x_max"`
}

// curveScales reads each curve's seeds and x range off a per-seed table,
// curves in the order they first appear.
func curveScales(t Table) []CurveScale {
	var out []CurveScale
	idx := map[string]int{}
	for _, r := range t {
		i, ok := idx[r.Curve]
		if !ok {
			i = len(out)
			idx[r.Curve] = i
			out = append(out, CurveScale{Curve: r.Curve, XMin: r.X, XMax: r.X})
		}
		c := &out[i]
		if !slices.Contains(c.Seeds, r.Seed) {
			c.Seeds = append(c.Seeds, r.Seed)
		}
		c.XMin, c.XMax = min(c.XMin, r.X), max(c.XMax, r.X)
	}
	for i := range out {
		slices.Sort(out[i].Seeds)
	}
	return out
}

// provenance says what a figure's curves were made from: the seeds of each
// and the range of x it covers (the hyperparameters follow it as tables,
// hyperMarkdown).
func (f *Figure) provenance() string {
	var parts []string
	for _, c := range f.Curves {
		seeds := make([]string, len(c.Seeds))
		for i, s := range c.Seeds {
			seeds[i] = fmt.Sprint(s)
		}
		parts = append(parts, fmt.Sprintf("%s: %d seeds (%s), x from %s to %s", c.Curve, len(c.Seeds), strings.Join(seeds, ", "), num(c.XMin), num(c.XMax)))
	}
	return strings.Join(parts, "; ") + "."
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
			f.Curves = curveScales(f.table)
			f.views = make([][]byte, len(companionViews))
			for i, v := range companionViews {
				if slices.Contains(in.Names(), stem+v.suffix) {
					if f.views[i], err = in.Read(stem + v.suffix); err != nil {
						return err
					}
				}
			}
			f.Extension = slices.Contains(r.extensions, stem)
			figs = append(figs, f)
		}
	}
	picks, err := readChosen(env)
	if err != nil {
		return err
	}
	for _, f := range figs {
		if f.hyper, err = hyperSources(f.Name, r.tuning, picks); err != nil {
			return err
		}
		f.Hyper = hyperText(f.hyper)
	}
	byName := map[string]*Figure{}
	var names []string
	for _, f := range figs {
		byName[f.Name] = f
		names = append(names, f.Name)
	}
	results := make([]Result, len(r.claims))
	for i, c := range r.claims {
		f := byName[c.Figure]
		if f == nil {
			return fmt.Errorf("claim %s: no input figure %q (the figures are %s)", c.ID, c.Figure, strings.Join(names, ", "))
		}
		results[i] = Evaluate(c, f.table)
	}
	doc := newDocument(r.title, r.scale, figs, results)
	doc.Untested = r.untested
	if r.reference != nil {
		there, err := r.reference.read()
		if err != nil {
			return err
		}
		cmp := Compare(there, Published{Path: "this report", Scale: r.scale, Claims: doc.Claims})
		cmp.A.SHA256 = r.reference.SHA256
		doc.Reference = &ComparisonSection{Name: r.reference.Name, Comparison: cmp}
	}
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
var verdictOrder = []Verdict{Holds, Contradicted, Inconclusive, Uninformative, NotRun, Reported}

// Verdicts returns every verdict, in the order the report counts them.
func Verdicts() []Verdict { return slices.Clone(verdictOrder) }

// Words is a verdict as the report's text writes it ("not run").
func (v Verdict) Words() string { return strings.ReplaceAll(string(v), "-", " ") }

func (d *Document) countsText() string {
	var parts []string
	for _, v := range verdictOrder {
		if n := d.Counts[string(v)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v.Words()))
		}
	}
	return strings.Join(parts, ", ")
}
