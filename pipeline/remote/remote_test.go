package remote_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/events"
	"zorepro/pipeline/pipelinetest"
	"zorepro/pipeline/provenance"
	"zorepro/pipeline/remote"
	"zorepro/pipeline/remote/file"
	"zorepro/pipeline/remote/remotetest"
	"zorepro/pipeline/remote/s3"
	"zorepro/pipeline/store"
	"zorepro/pipeline/task"
)

// growKind is the stage kind "grow": it reads its input (if any), records
// a few iterations and publishes size bytes drawn from its streams.
type growKind struct{}

func (growKind) Name() string       { return "grow" }
func (growKind) Version() int       { return 1 }
func (growKind) Slots() []task.Slot { return []task.Slot{{Name: "in", Many: true}} }
func (growKind) Plan(p *task.Params) task.Runner {
	return &growRunner{size: p.Int("size", task.Required(), task.Above(0))}
}

type growRunner struct{ size int64 }

func (r *growRunner) Components() []any { return []any{strings.Builder{}} }
func (r *growRunner) Run(ctx context.Context, env task.Env) error {
	var in []byte
	for _, up := range env.Inputs("in") {
		b, err := up.Read("data")
		if err != nil {
			return err
		}
		in = append(in, b...)
	}
	rng := env.Streams().Rand("bytes", 0)
	out := make([]byte, r.size)
	for i := range out {
		out[i] = byte(rng.Uint32())
	}
	h := sha256.Sum256(append(out, in...))
	for it := int64(1); it <= 3; it++ {
		env.Iteration(task.Iter{Iteration: it, Samples: it * 10, Digest: uint64(h[it])})
	}
	env.Note("trial", map[string]int{"size": int(r.size)})
	return env.Output("data", append(out, h[:]...))
}

const growDAG = `
version: 1
seeds:
  s: [1, 2, 3]
stages:
  - name: gen
    kind: grow
    params: {size: 20000}
    matrix: {seed: $s}
  - name: fit
    kind: grow
    params: {size: 3000}
    inputs: {in: gen}
    matrix: {seed: $s}
  - name: plot
    kind: grow
    params: {size: 500}
    inputs: {in: fit}
`

// lab is a store with its plan: one machine of a lab.
type lab struct {
	t    *testing.T
	dir  string
	code *pipelinetest.FakeCode
}

func newLab(t *testing.T, code *pipelinetest.FakeCode) *lab {
	return &lab{t: t, dir: t.TempDir(), code: code}
}

// engine opens the lab's store and log with the plan cut to targets.
func (l *lab) engine(targets ...string) *pipeline.Engine {
	l.t.Helper()
	path := filepath.Join(l.dir, "dag.yaml")
	if err := os.WriteFile(path, []byte(growDAG), 0o644); err != nil {
		l.t.Fatal(err)
	}
	plan, err := dag.Load(path, "", map[string]task.Kind{"grow": growKind{}})
	if err != nil {
		l.t.Fatal(err)
	}
	if len(targets) > 0 {
		if plan, err = plan.Only(targets); err != nil {
			l.t.Fatal(err)
		}
	}
	st, err := store.Open(filepath.Join(l.dir, "store"))
	if err != nil {
		l.t.Fatal(err)
	}
	log, err := events.Open(filepath.Join(l.dir, "store", "events.db"), events.Options{Timeout: 5 * time.Second})
	if err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(func() { log.Close() })
	return &pipeline.Engine{Plan: plan, Store: st, Events: log, Code: l.code, Platform: pipeline.Platform{GoVersion: "go-test", GOARCH: "test"},
		Opt: pipeline.Options{Jobs: 2, Profile: "test"}}
}

// run runs the plan (cut to targets) and closes the log.
func (l *lab) run(targets ...string) *pipeline.Result {
	l.t.Helper()
	e := l.engine(targets...)
	defer e.Events.Close()
	res, err := e.Run(context.Background())
	if err != nil {
		l.t.Fatal(err)
	}
	return res
}

// files hashes the store's content entries and its event log: what a
// refused pull must leave as it was.
func (l *lab) files() map[string][32]byte {
	out := map[string][32]byte{}
	root := filepath.Join(l.dir, "store")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, p)
		if err == nil && d.Type().IsRegular() && (strings.HasPrefix(rel, "cas/") || rel == "events.db") {
			b, _ := os.ReadFile(p)
			out[rel] = sha256.Sum256(b)
		}
		return nil
	})
	return out
}

func push(t *testing.T, e *pipeline.Engine, b remote.Backend, k *remote.Key) *remote.PushSummary {
	t.Helper()
	defer e.Events.Close()
	sum, err := remote.Push(context.Background(), e, b, remote.PushOptions{Sign: k, About: remote.Pushed{Profile: "test"}})
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	return sum
}

func pull(e *pipeline.Engine, b remote.Backend, trust ...remote.PublicKey) (*remote.PullSummary, error) {
	defer e.Events.Close()
	return remote.Pull(context.Background(), e, b, remote.PullOptions{Trust: trust})
}

func dirRemote(t *testing.T) *file.Dir {
	d, err := file.Open(filepath.Join(t.TempDir(), "remote"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A lab pushes its results; another machine pulls one target: exactly its
// closure arrives, every byte checked, and a run there executes nothing;
// pulling again fetches nothing; pushing again writes nothing.
func TestPushThenPullATarget(t *testing.T) {
	code := pipelinetest.NewFakeCode()
	a := newLab(t, code)
	a.run()
	b := dirRemote(t)
	sum := push(t, a.engine(), b, nil)
	if sum.Tasks != 7 || len(sum.Added) != 7 || sum.Uploaded != sum.Objects || sum.Objects != 2*7+7 {
		t.Fatalf("push: %+v", sum)
	}
	if again := push(t, a.engine(), b, nil); len(again.Added) != 0 || again.Present != 7 || again.Uploaded != 0 {
		t.Errorf("a second push wrote: %+v", again)
	}

	c := newLab(t, code)
	got, err := pull(c.engine("fit/seed=2"), b)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.Pulled) != "[gen/seed=2 fit/seed=2]" || len(got.Missing) != 0 {
		t.Fatalf("pull of fit/seed=2: %+v", got)
	}
	// The closure: 2 records, 2 manifests, 2 data files; fetched: those,
	// the 2 action entries and the index.
	if got.Objects != 6 || got.ClosureBytes < 23000 || got.FetchedBytes != got.ClosureBytes || got.MetadataBytes == 0 || got.MetadataBytes > 10000 {
		t.Errorf("pull of fit/seed=2: %d objects, closure %d bytes, fetched %d and %d of metadata", got.Objects, got.ClosureBytes, got.FetchedBytes, got.MetadataBytes)
	}
	if res := c.run("fit/seed=2"); len(res.Executed) != 0 || len(res.Cached) != 2 {
		t.Errorf("a run after the pull executed %v", res.Executed)
	}
	again, err := pull(c.engine("fit/seed=2"), b)
	if err != nil || len(again.Pulled) != 0 || len(again.Present) != 2 || again.Fetched != 0 {
		t.Errorf("a second pull: %+v, %v", again, err)
	}
	// The pulled tasks replay and verify as on the machine that ran them.
	e := c.engine("fit/seed=2")
	defer e.Events.Close()
	cands, err := provenance.New(e).VerifyCandidates()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := provenance.OpenScratch(filepath.Join(t.TempDir(), "scratch"))
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	vs, err := provenance.New(e).Verify(context.Background(), cands, sc, nil)
	if err != nil || len(vs) != 2 || !vs[0].Match || !vs[1].Match {
		t.Errorf("verify after the pull: %+v, %v", vs, err)
	}
	if _, err := os.Stat(filepath.Join(c.dir, "store", "incoming")); !os.IsNotExist(err) {
		t.Errorf("a finished pull left its staging directory: %v", err)
	}
}

// A byte flipped in one object on the remote: the pull names the object
// and fails, and the store (its entries and event log) is as it was; once
// the object is repaired the same pull completes without fetching again
// what it had verified.
func TestPullNamesADamagedObject(t *testing.T) {
	code := pipelinetest.NewFakeCode()
	a := newLab(t, code)
	a.run()
	b := dirRemote(t)
	push(t, a.engine(), b, nil)
	// The largest object is a gen data file.
	var victim string
	var size int64
	b.List(context.Background(), "objects/", func(key string, n int64, _ time.Time) error {
		if n > size {
			victim, size = key, n
		}
		return nil
	})
	path := filepath.Join(b.String()[len("file://"):], filepath.FromSlash(victim))
	good, _ := os.ReadFile(path)
	bad := bytes.Clone(good)
	bad[len(bad)/2] ^= 1
	os.WriteFile(path, bad, 0o644)

	c := newLab(t, code)
	c.engine().Events.Close() // an empty store and log
	before := c.files()
	_, err := pull(c.engine(), b)
	if !errors.Is(err, remote.ErrDamaged) || !strings.Contains(err.Error(), victim) {
		t.Fatalf("pull with a damaged object: %v, want ErrDamaged naming %s", err, victim)
	}
	after := c.files()
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("a refused pull changed the store: %d files before, %d after", len(before), len(after))
	}
	os.WriteFile(path, good, 0o644)
	got, err := pull(c.engine(), b)
	if err != nil || len(got.Pulled) != 7 {
		t.Fatalf("pull after the repair: %+v, %v", got, err)
	}
	if got.Fetched != 1 {
		t.Errorf("the pull after the repair fetched %d of %d entries: it should fetch the repaired one alone", got.Fetched, got.Objects-7)
	}
}

// Trust: an index signed by a trusted key is taken; an unsigned one, one
// signed by another key, and one changed after it was signed are refused
// (nothing pulled).
func TestPullTrustsOnlyASignedIndex(t *testing.T) {
	code := pipelinetest.NewFakeCode()
	a := newLab(t, code)
	a.run()
	lab, _ := remote.GenerateKey("lab", bytesReader(1))
	other, _ := remote.GenerateKey("mallory", bytesReader(2))
	if k, err := remote.ParseKey(lab.MarshalText()); err != nil || string(k.MarshalText()) != string(lab.MarshalText()) {
		t.Fatalf("a key does not read back: %v", err)
	}
	pub, err := remote.ParsePublicKey(lab.Public().MarshalText())
	if err != nil {
		t.Fatal(err)
	}

	unsigned := dirRemote(t)
	push(t, a.engine(), unsigned, nil)
	signed := dirRemote(t)
	push(t, a.engine(), signed, lab)
	byOther := dirRemote(t)
	push(t, a.engine(), byOther, other)

	for _, c := range []struct {
		name string
		b    remote.Backend
		want string
	}{{"unsigned", unsigned, "not signed"}, {"another key", byOther, "signed only by mallory"}} {
		l := newLab(t, code)
		if _, err := pull(l.engine(), c.b, pub); !errors.Is(err, remote.ErrUntrusted) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrUntrusted saying %q", c.name, err, c.want)
		}
	}
	l := newLab(t, code)
	got, err := pull(l.engine(), signed, pub)
	if err != nil || got.TrustedBy != "lab" || len(got.Pulled) != 7 {
		t.Fatalf("pull of the signed index: %+v, %v", got, err)
	}
	// Changed after signing: one more push without the key drops the
	// signature it invalidates.
	code.Bump("strings")
	a.run()
	push(t, a.engine(), signed, nil)
	l = newLab(t, code)
	if _, err := pull(l.engine(), signed, pub); !errors.Is(err, remote.ErrUntrusted) {
		t.Errorf("pull after an unsigned push changed the index: %v, want ErrUntrusted", err)
	}
	// A forged signature (the index's bytes changed by hand) is refused.
	idx := filepath.Join(byOther.String()[len("file://"):], "index.json")
	data, _ := os.ReadFile(idx)
	os.WriteFile(idx, bytes.Replace(data, []byte(`"profile":"test"`), []byte(`"profile":"tset"`), 1), 0o644)
	otherPub := other.Public()
	if _, err := pull(newLab(t, code).engine(), byOther, otherPub); !errors.Is(err, remote.ErrUntrusted) || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("pull of an index changed after signing: %v", err)
	}
}

// Two machines that computed different bytes for the same action: the
// push of the second is refused naming the task, and so is a pull into
// it; the index is left as it was.
func TestDivergenceIsRefused(t *testing.T) {
	code := pipelinetest.NewFakeCode()
	a := newLab(t, code)
	a.run("gen/seed=1")
	b := dirRemote(t)
	push(t, a.engine("gen/seed=1"), b, nil)
	index, _ := os.ReadFile(filepath.Join(b.String()[len("file://"):], "index.json"))

	c := newLab(t, code)
	c.run("gen/seed=1")
	forge(t, c.engine("gen/seed=1"), "gen/seed=1")
	e := c.engine("gen/seed=1")
	_, err := remote.Push(context.Background(), e, b, remote.PushOptions{})
	e.Events.Close()
	if !errors.Is(err, remote.ErrDiverged) || !strings.Contains(err.Error(), "gen/seed=1") {
		t.Errorf("push of a divergent result: %v", err)
	}
	if now, _ := os.ReadFile(filepath.Join(b.String()[len("file://"):], "index.json")); !bytes.Equal(now, index) {
		t.Errorf("a refused push changed the index")
	}
	if _, err := pull(c.engine("gen/seed=1"), b); !errors.Is(err, remote.ErrDiverged) {
		t.Errorf("pull into a divergent store: %v", err)
	}
}

// forge records, for task's action, another output (what a machine that
// computed other bytes records).
func forge(t *testing.T, e *pipeline.Engine, taskPath string) {
	t.Helper()
	defer e.Events.Close()
	p, err := provenance.New(e).LastProduction(taskPath)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := e.Store.Put([]byte("other bytes"))
	mf, _ := e.Store.Put([]byte("zorepro-outputs v1\ndata " + id.String() + " 11\n"))
	run, _ := e.Events.BeginRun(nil, 0)
	w := e.Events.NewWriter(events.WriterOptions{})
	w.Append(events.Event{Type: events.TypeState, Run: run, Task: taskPath, State: events.StateDone, Action: p.Action, Output: mf.String()})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// Four machines push overlapping results to one S3 bucket at once: every
// object verifies, the index lists every action, and a pull into an empty
// store finds everything.
func TestConcurrentPushersToS3(t *testing.T) {
	remotetest.S3(t, "lab")
	code := pipelinetest.NewFakeCode()
	targets := [][]string{{"fit/seed=1"}, {"fit/seed=2", "fit/seed=1"}, {"fit/seed=3"}, {"plot"}}
	labs := make([]*lab, len(targets))
	for i, tg := range targets {
		labs[i] = newLab(t, code)
		labs[i].run(tg...)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(labs))
	for i, l := range labs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := s3.Open(context.Background(), "lab", "shared")
			if err != nil {
				errs[i] = err
				return
			}
			e := l.engine(targets[i]...)
			defer e.Events.Close()
			_, errs[i] = remote.Push(context.Background(), e, b, remote.PushOptions{Jobs: 4})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("pusher %d: %v", i, err)
		}
	}
	b, err := s3.Open(context.Background(), "lab", "shared")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = b.List(context.Background(), "objects/", func(key string, _ int64, _ time.Time) error {
		n++
		r, err := b.Get(context.Background(), key)
		if err != nil {
			return err
		}
		defer r.Close()
		h := sha256.New()
		if _, err := io.Copy(h, r); err != nil {
			return err
		}
		if got := fmt.Sprintf("%x", h.Sum(nil)); !strings.HasSuffix(key, got) {
			t.Errorf("object %s has SHA-256 %s", key, got)
		}
		return nil
	})
	// 14 store entries, and a record of each task from each machine that
	// pushed it (the records differ in their timings).
	if err != nil || n < 21 {
		t.Errorf("the bucket holds %d objects (%v), want at least 21", n, err)
	}
	c := newLab(t, code)
	got, err := pull(c.engine(), b)
	if err != nil || len(got.Pulled) != 7 || len(got.Missing) != 0 {
		t.Fatalf("pull from the bucket: %+v, %v", got, err)
	}
	if res := c.run(); len(res.Executed) != 0 {
		t.Errorf("a run after the pull executed %v", res.Executed)
	}
}

// A cancelled pull records nothing and leaves no temporary file; the same
// pull then completes without fetching again what it had verified.
func TestInterruptedPullResumes(t *testing.T) {
	code := pipelinetest.NewFakeCode()
	a := newLab(t, code)
	a.run()
	b := dirRemote(t)
	push(t, a.engine(), b, nil)
	c := newLab(t, code)
	slow := &cancelAfter{Backend: b, n: 12}
	e := c.engine()
	ctx, cancel := context.WithCancel(context.Background())
	slow.cancel = cancel
	_, err := remote.Pull(ctx, e, slow, remote.PullOptions{Jobs: 1})
	e.Events.Close()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled pull: %v", err)
	}
	if runs := pipelinetest.ReadLog(t, filepath.Join(c.dir, "store"), (*events.Log).Runs); len(runs) != 0 {
		t.Errorf("a cancelled pull recorded runs %v", runs)
	}
	filepath.WalkDir(filepath.Join(c.dir, "store"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".tmp-") {
			t.Errorf("a cancelled pull left %s", p)
		}
		return nil
	})
	got, err := pull(c.engine(), b)
	if err != nil || len(got.Pulled) != 7 {
		t.Fatalf("the pull after the interruption: %+v, %v", got, err)
	}
	if got.Fetched == 0 || got.Fetched >= got.Objects-7 {
		t.Errorf("the pull after the interruption fetched %d of %d entries: it should fetch only those the interrupted one had not verified", got.Fetched, got.Objects-7)
	}
}

// cancelAfter cancels its pull on the n-th object fetched.
type cancelAfter struct {
	remote.Backend
	n, gets int
	mu      sync.Mutex
	cancel  func()
}

func (c *cancelAfter) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if strings.HasPrefix(key, "objects/") {
		c.mu.Lock()
		c.gets++
		if c.gets == c.n {
			c.cancel()
		}
		c.mu.Unlock()
	}
	return c.Backend.Get(ctx, key)
}

// bytesReader is a deterministic source of key material.
func bytesReader(seed byte) io.Reader {
	return bytes.NewReader(bytes.Repeat([]byte{seed}, 64))
}

// gc keeps what the kept tasks reach and removes the rest (a dry run
// first, changing nothing); it refuses a keep list that matches nothing.
func TestGCKeepsWhatTheTargetsReach(t *testing.T) {
	code := pipelinetest.NewFakeCode()
	a := newLab(t, code)
	a.run()
	b := dirRemote(t)
	push(t, a.engine(), b, nil)
	ctx := context.Background()
	count := func() (n int) {
		for _, p := range []string{"objects/", "actions/"} {
			b.List(ctx, p, func(string, int64, time.Time) error { n++; return nil })
		}
		return n
	}
	before := count()
	if _, err := remote.GC(ctx, b, remote.GCOptions{Keep: []string{"nope"}, Delete: true}); err == nil {
		t.Fatal("gc with a keep list matching nothing went ahead")
	}
	keep := []string{"fit/seed=1"} // and gen/seed=1, which it read
	dry, err := remote.GC(ctx, b, remote.GCOptions{Keep: keep})
	if err != nil || dry.KeptTasks != 2 || dry.Dropped != 5 || dry.Actions != 5 || dry.Objects != 15 || count() != before {
		t.Fatalf("dry run: %+v, %v (%d objects, %d before)", dry, err, count(), before)
	}
	rep, err := remote.GC(ctx, b, remote.GCOptions{Keep: keep, Delete: true})
	if err != nil || rep.Objects != dry.Objects || count() != before-dry.Objects-dry.Actions {
		t.Fatalf("gc: %+v, %v", rep, err)
	}
	got, err := pull(newLab(t, code).engine(), b)
	if err != nil || fmt.Sprint(got.Pulled) != "[gen/seed=1 fit/seed=1]" || len(got.Missing) != 5 {
		t.Errorf("pull after gc: %+v, %v", got, err)
	}
}
