package remote

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"zorepro/pipeline"
	"zorepro/pipeline/atomicfile"
	"zorepro/pipeline/bundle"
	"zorepro/pipeline/crashpoint"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/store"
)

// PullOptions says how Pull reads.
type PullOptions struct {
	// Trust, if not empty, makes Pull take only what an index signed by
	// one of these keys lists, every byte checked against it.
	Trust []PublicKey
	// Jobs is how many objects move at once (default 8).
	Jobs int
	// Info is the start event's data of the run that records the pulled
	// tasks (Pull adds the profile and the remote).
	Info map[string]any
}

// PullSummary is what Pull did.
type PullSummary struct {
	Remote string `json:"remote"`
	// Run is the run that recorded the pulled tasks (0: none).
	Run uint64 `json:"run"`
	// Pulled tasks were recorded from the remote; Present ones the store
	// held already; Missing ones are not on the remote (or not in its
	// signed index), or need a task that is not.
	Pulled  []string `json:"pulled"`
	Present []string `json:"present"`
	Missing []string `json:"missing"`
	// Reasons says why each missing task is missing.
	Reasons map[string]string `json:"reasons"`
	// ClosureBytes is the size of the pulled tasks' objects (records and
	// store entries); FetchedBytes what this pull downloaded of them (not
	// what the store or an interrupted pull's staging held);
	// MetadataBytes what it read besides (the index, action entries).
	ClosureBytes  int64 `json:"closure_bytes"`
	FetchedBytes  int64 `json:"fetched_bytes"`
	MetadataBytes int64 `json:"metadata_bytes"`
	// Objects counts the pulled tasks' objects; Fetched the store entries
	// among them that this pull downloaded (not those the store or an
	// interrupted pull's staging held).
	Objects   int    `json:"objects"`
	Fetched   int    `json:"fetched"`
	TrustedBy string `json:"trusted_by,omitempty"`
}

// resolution is what Pull found for one task.
type resolution struct {
	output string
	entry  *ActionEntry // pulled from the remote
	why    string       // missing: why
	lines  string       // its identity transcript
}

// puller is one pull's state.
type puller struct {
	ctx     context.Context
	eng     *pipeline.Engine
	b       Backend
	staging string
	index   map[string]IndexTask // by action; nil: no index
	trusted bool
	fetched atomic.Int64 // objects
	meta    atomic.Int64 // index, action entries
}

// Pull fetches from b the recorded results of the engine's plan (the
// targets' closure) that the store lacks, and records them as one run, so
// that `pipeline run` finds them cached and audit, replay and verify work
// on them. Each task's action is computed here, from this binary, the plan
// and the upstream outputs, and looked up on the remote: only what the
// plan needs is fetched. Every object is checked against its SHA-256 (and
// each store entry against its content ID) before it is used; verified
// objects wait in a staging directory under the store (kept across an
// interruption, so that the same pull later does not fetch them again)
// and enter the store together once every one of them has arrived. A
// damaged object is ErrDamaged, naming it: nothing enters the store or its
// event log. An action the store records with another output than the
// remote's is ErrDiverged, naming every such task. With o.Trust, only
// what a trusted signature of the index lists is taken (ErrUntrusted if
// the index is unsigned or wrongly signed).
func Pull(ctx context.Context, eng *pipeline.Engine, b Backend, o PullOptions) (*PullSummary, error) {
	h := sha256.Sum256([]byte(b.String()))
	p := &puller{ctx: ctx, eng: eng, b: b, staging: filepath.Join(eng.Store.Root(), "incoming", hex.EncodeToString(h[:8]))}
	sum := &PullSummary{Remote: b.String(), Pulled: []string{}, Present: []string{}, Missing: []string{}, Reasons: map[string]string{}}
	data, _, err := b.Load(ctx, indexKey)
	switch {
	case errors.Is(err, ErrNotFound) && len(o.Trust) > 0:
		return nil, fmt.Errorf("%w: %s has no index", ErrUntrusted, b)
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return nil, err
	default:
		p.meta.Add(int64(len(data)))
		x, err := decodeIndex(data, b.String())
		if err != nil {
			return nil, err
		}
		if len(o.Trust) > 0 {
			if sum.TrustedBy, err = x.trustedBy(o.Trust); err != nil {
				return nil, err
			}
			p.trusted = true
		}
		p.index = map[string]IndexTask{}
		for _, t := range x.Tasks {
			p.index[t.Action] = t
		}
	}
	if err := os.MkdirAll(p.staging, 0o755); err != nil {
		return nil, err
	}
	res, diverged, err := p.resolveAll(o.Jobs)
	if err != nil {
		return nil, err
	}
	if len(diverged) > 0 {
		return nil, fmt.Errorf("%w: nothing pulled; %d task(s): %s", ErrDiverged, len(diverged), strings.Join(diverged, "; "))
	}
	var pulled []*ActionEntry
	for _, t := range eng.Plan.Tasks {
		r := res[t]
		switch {
		case r.entry != nil:
			sum.Pulled = append(sum.Pulled, t.Path)
			pulled = append(pulled, r.entry)
		case r.why != "":
			sum.Missing = append(sum.Missing, t.Path)
			sum.Reasons[t.Path] = r.why
		default:
			sum.Present = append(sum.Present, t.Path)
		}
	}
	need, err := p.objectsToFetch(pulled, sum)
	if err != nil {
		return nil, err
	}
	// A damaged object does not stop the others: they are verified and
	// staged, so that once it is repaired the same pull fetches it alone.
	fetched := make([]bool, len(need))
	damaged := make([]error, len(need))
	err = parallel(ctx, jobsOr(o.Jobs), need, func(ctx context.Context, i int, e Entry) error {
		var err error
		fetched[i], err = p.stage(ctx, e.Object, e.ID, "")
		if errors.Is(err, ErrDamaged) {
			damaged[i], err = err, nil
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if errs := nonNil(damaged); len(errs) > 0 {
		return nil, fmt.Errorf("%w; nothing was recorded: the %d other objects the pull needs are verified and wait in %s", errors.Join(errs...), len(need)-len(errs), p.staging)
	}
	for _, f := range fetched {
		if f {
			sum.Fetched++
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Every object has arrived and verified: into the store, then the
	// records into the event log, in plan order.
	for _, ae := range pulled {
		for _, e := range ae.Entries {
			if err := p.adopt(e); err != nil {
				return nil, err
			}
		}
	}
	info := map[string]any{"profile": eng.Opt.Profile, "pull": b.String()}
	for k, v := range o.Info {
		info[k] = v
	}
	js, _ := json.Marshal(info)
	if len(pulled) > 0 {
		sum.Run, err = bundle.RecordTasks(eng.Events, len(pulled), func(yield func(*bundle.Record) error) error {
			for _, ae := range pulled {
				r, err := p.readRecord(ae)
				if err != nil {
					return err
				}
				if err := yield(r); err != nil {
					return err
				}
			}
			return nil
		}, js)
		if err != nil {
			return nil, err
		}
	}
	sum.FetchedBytes, sum.MetadataBytes = p.fetched.Load(), p.meta.Load()
	os.RemoveAll(p.staging)
	os.Remove(filepath.Dir(p.staging)) // incoming/, if no other pull stages there
	return sum, nil
}

func jobsOr(n int) int {
	if n <= 0 {
		return 8
	}
	return n
}

// resolveAll resolves the plan's tasks in waves (a task once every task it
// needs is resolved), each wave on jobs goroutines.
func (p *puller) resolveAll(jobs int) (map[*dag.Task]*resolution, []string, error) {
	res := map[*dag.Task]*resolution{}
	var diverged []string
	left := slices.Clone(p.eng.Plan.Tasks)
	for len(left) > 0 {
		var wave, rest []*dag.Task
		for _, t := range left {
			ready := true
			for _, d := range t.Deps {
				if res[d] == nil {
					ready = false
					break
				}
			}
			if ready {
				wave = append(wave, t)
			} else {
				rest = append(rest, t)
			}
		}
		if len(wave) == 0 {
			return nil, nil, fmt.Errorf("remote: the plan's tasks %v wait on tasks outside it", rest[:min(3, len(rest))])
		}
		out := make([]*resolution, len(wave))
		div := make([]string, len(wave))
		err := parallel(p.ctx, jobsOr(jobs), wave, func(ctx context.Context, i int, t *dag.Task) error {
			var err error
			out[i], div[i], err = p.resolve(ctx, t, res)
			return err
		})
		if err != nil {
			return nil, nil, err
		}
		for i, t := range wave {
			res[t] = out[i]
		}
		diverged = append(diverged, nonEmpty(div)...)
		left = rest
	}
	return res, diverged, nil
}

// resolve finds where t's output comes from: this store, the remote, or
// nowhere (why). It reads res only for t's upstream tasks, resolved in
// earlier waves.
func (p *puller) resolve(ctx context.Context, t *dag.Task, res map[*dag.Task]*resolution) (*resolution, string, error) {
	deps := map[string]string{}
	for _, d := range t.Deps {
		r := res[d]
		if r.output == "" {
			return &resolution{why: "needs " + d.Path + ", which is missing"}, "", nil
		}
		deps[d.Path] = r.output
	}
	lines, err := pipeline.Transcript(t, p.eng.Code, p.eng.Platform, deps)
	if err != nil {
		return nil, "", err
	}
	action := pipeline.Action(lines).String()
	it, indexed := p.index[action]
	have, ok, err := p.eng.Events.Action(action)
	if err != nil {
		return nil, "", err
	}
	if ok && p.eng.VerifyOutput(have.Output) == nil {
		if indexed && it.Output != have.Output {
			return nil, fmt.Sprintf("%s (action %s: the remote's output %s, this store's %s)", t.Path, action, it.Output, have.Output), nil
		}
		return &resolution{output: have.Output}, "", nil
	}
	if p.trusted && !indexed {
		return &resolution{why: "not in the remote's signed index"}, "", nil
	}
	key := ActionKey(action)
	data, err := p.getSmall(ctx, key, MaxActionEntry)
	if errors.Is(err, ErrNotFound) {
		return &resolution{why: "not on the remote (no action " + action + ")"}, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	if indexed && sum256(data) != it.Entry {
		return nil, "", fmt.Errorf("%w: %s/%s: its SHA-256 is not the one the index lists", ErrDamaged, p.b, key)
	}
	var ae ActionEntry
	if err := json.Unmarshal(data, &ae); err != nil || ae.Format != Format || ae.Task != t.Path || ae.Action != action || !validSum(ae.Record.SHA256) {
		return nil, "", fmt.Errorf("%w: %s/%s is not the action entry of %s (%v)", ErrDamaged, p.b, key, t.Path, err)
	}
	for _, e := range ae.Entries {
		if !validSum(e.SHA256) {
			return nil, "", fmt.Errorf("%w: %s/%s names an object %q", ErrDamaged, p.b, key, e.SHA256)
		}
	}
	if ok && have.Output != ae.Output {
		return nil, fmt.Sprintf("%s (action %s: the remote's output %s, this store's %s)", t.Path, action, ae.Output, have.Output), nil
	}
	r := &resolution{output: ae.Output, entry: &ae, lines: strings.Join(lines, "\n")}
	if ae.Record.Size > MaxRecord {
		return nil, "", fmt.Errorf("%w: %s: the record of %s is %d bytes, more than a record may be", ErrDamaged, p.b, t.Path, ae.Record.Bytes)
	}
	if _, err := p.stage(ctx, ae.Record, "", t.Path); err != nil {
		return nil, "", err
	}
	rec, err := p.readRecord(&ae)
	if err != nil {
		return nil, "", err
	}
	if rec.Transcript != r.lines {
		return nil, "", fmt.Errorf("%w: %s: the record of %s (object %s) is of another identity than the action it is filed under", ErrDamaged, p.b, t.Path, ObjectKey(ae.Record.SHA256))
	}
	return r, "", nil
}

// getSmall reads a small object whole, bounded by limit.
func (p *puller) getSmall(ctx context.Context, key string, limit int64) ([]byte, error) {
	r, err := p.b.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	p.meta.Add(int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("remote %s: %s: %w", p.b, key, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: %s/%s is larger than %d bytes", ErrDamaged, p.b, key, limit)
	}
	return data, nil
}

// staged is where a verified object waits.
func (p *puller) staged(sum string) string { return filepath.Join(p.staging, sum) }

// stage fetches an object into the staging directory unless it is there,
// checking its SHA-256 (and, for a store entry, its content ID id) before
// it takes its name there; it reports whether it fetched. task names the
// task in errors ("" for entries).
func (p *puller) stage(ctx context.Context, o Object, id, task string) (bool, error) {
	final := p.staged(o.SHA256)
	if fi, err := os.Stat(final); err == nil && fi.Size() == o.Size {
		return false, nil
	}
	key := ObjectKey(o.SHA256)
	r, err := p.b.Get(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return false, fmt.Errorf("%w: %s/%s is missing (an action entry names it)", ErrDamaged, p.b, key)
	}
	if err != nil {
		return false, err
	}
	defer r.Close()
	f, err := atomicfile.CreateTemp(final)
	if err != nil {
		return false, err
	}
	defer os.Remove(f.Name())
	what := ""
	if task != "" {
		what = " (the record of " + task + ")"
	}
	damaged := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s/%s%s: %s", ErrDamaged, p.b, key, what, fmt.Sprintf(format, args...))
	}
	// The stored bytes are hashed as they arrive; the content they
	// decompress to is written and hashed by its content ID.
	h, xh := sha256.New(), store.NewHash()
	stored := &countingReader{r: io.TeeReader(io.LimitReader(ContextReader{Ctx: ctx, R: r}, o.Bytes+1), h)}
	var n int64
	zr, err := gzip.NewReader(stored)
	if err == nil {
		zr.Multistream(false)
		n, err = io.Copy(io.MultiWriter(f, xh), io.LimitReader(zr, o.Size+1))
		if err == nil {
			_, err = io.Copy(io.Discard, stored) // the rest: the hash covers every byte
		}
	}
	p.fetched.Add(stored.n)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	got := hex.EncodeToString(h.Sum(nil))
	switch {
	case ctx.Err() != nil:
		return false, ctx.Err()
	case stored.n != o.Bytes || got != o.SHA256:
		return false, damaged("%d bytes with SHA-256 %s, its name says %d bytes, %s", stored.n, got, o.Bytes, o.SHA256)
	case err != nil:
		return false, damaged("%v", err)
	case n != o.Size:
		return false, damaged("it decompresses to %d bytes, its action entry says %d", n, o.Size)
	case id != "" && xh.ID().String() != id:
		return false, damaged("its content has content ID %s, its action entry says %s", xh.ID(), id)
	}
	if err := os.Rename(f.Name(), final); err != nil {
		return false, err
	}
	crashpoint.Hit("remote.object")
	return true, nil
}

// readRecord decodes a staged record and checks it against its entry.
func (p *puller) readRecord(ae *ActionEntry) (*bundle.Record, error) {
	f, err := os.Open(p.staged(ae.Record.SHA256))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r bundle.Record
	if err := gob.NewDecoder(io.LimitReader(f, MaxRecord)).Decode(&r); err != nil || r.Task != ae.Task || r.Action != ae.Action || r.Output != ae.Output {
		return nil, fmt.Errorf("%w: %s/%s is not the record of %s's action %s (%v)", ErrDamaged, p.b, ObjectKey(ae.Record.SHA256), ae.Task, ae.Action, err)
	}
	ids := make([]string, len(ae.Entries))
	for i, e := range ae.Entries {
		ids[i] = e.ID
	}
	if !slices.Equal(ids, r.Entries) {
		return nil, fmt.Errorf("%w: %s/%s: the entries of %s's action entry are not its record's", ErrDamaged, p.b, ObjectKey(ae.Record.SHA256), ae.Task)
	}
	return &r, nil
}

// objectsToFetch lists the store entries of the pulled tasks that neither
// the store nor the staging directory holds, once each, in key order; it
// adds the closure's size to sum.
func (p *puller) objectsToFetch(pulled []*ActionEntry, sum *PullSummary) ([]Entry, error) {
	seen := map[string]bool{}
	var need []Entry
	for _, ae := range pulled {
		if !seen[ae.Record.SHA256] {
			seen[ae.Record.SHA256] = true
			sum.ClosureBytes += ae.Record.Bytes
			sum.Objects++
		}
		for _, e := range ae.Entries {
			if seen[e.SHA256] {
				continue
			}
			seen[e.SHA256] = true
			sum.ClosureBytes += e.Bytes
			sum.Objects++
			id, err := store.ParseID(e.ID)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %s's action entry names a content ID %q", ErrDamaged, p.b, ae.Task, e.ID)
			}
			if p.eng.Store.Check(id) == nil {
				continue
			}
			need = append(need, e)
		}
	}
	slices.SortFunc(need, func(a, b Entry) int { return strings.Compare(a.SHA256, b.SHA256) })
	return need, nil
}

// adopt moves a staged entry into the store (or drops it if the store has
// it already).
func (p *puller) adopt(e Entry) error {
	id, _ := store.ParseID(e.ID)
	if p.eng.Store.Check(id) == nil {
		return nil
	}
	return p.eng.Store.Adopt(id, p.staged(e.SHA256))
}

// ContextReader reads R until Ctx is done (then Read returns Ctx's
// error): a long copy that a signal can stop.
type ContextReader struct {
	Ctx context.Context
	R   io.Reader
}

func (c ContextReader) Read(b []byte) (int, error) {
	if err := c.Ctx.Err(); err != nil {
		return 0, err
	}
	return c.R.Read(b)
}

// countingReader counts what it reads.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

func nonNil(errs []error) []error {
	var out []error
	for _, err := range errs {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}
