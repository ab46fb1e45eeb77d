package remote

import (
	"bytes"
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
	"slices"
	"strings"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/bundle"
	"zorepro/pipeline/crashpoint"
	"zorepro/pipeline/provenance"
	"zorepro/pipeline/store"
)

// PushOptions says how Push writes.
type PushOptions struct {
	// Jobs is how many objects move at once (default 8).
	Jobs int
	// Sign, if set, signs the index.
	Sign *Key
	// About is recorded in the index (Tasks and At are set by Push).
	About Pushed
}

// PushSummary is what Push did.
type PushSummary struct {
	Remote string `json:"remote"`
	// Tasks is the closure's size; Added the actions this push wrote,
	// Present those the remote held already with the same output.
	Tasks   int      `json:"tasks"`
	Added   []string `json:"added"`
	Present int      `json:"present"`
	// Objects and Bytes are the closure's objects (records and store
	// entries); Uploaded and UploadedBytes what this push wrote of them.
	Objects       int    `json:"objects"`
	Bytes         int64  `json:"bytes"`
	Uploaded      int    `json:"uploaded"`
	UploadedBytes int64  `json:"uploaded_bytes"`
	SignedBy      string `json:"signed_by,omitempty"`
}

// upload is one object a push writes.
type upload struct {
	key  string
	obj  Object
	open func() (io.ReadSeekCloser, error)
}

// Push writes the recorded results of the engine's plan (the targets'
// closure) to b: every object first (records and store entries, by
// SHA-256, each written once), then each task's action entry, then the
// index, merged by compare-and-swap with what other pushers wrote meanwhile
// (and signed with o.Sign). Every task must be recorded at the action this
// binary and plan give it (ErrNotRecorded names those that are not). An
// action the remote holds with another output is ErrDiverged, naming every
// such task; the index is then left as it was. A cancelled ctx stops it
// with ctx's error: objects are written whole or not at all, so the same
// push later completes.
func Push(ctx context.Context, eng *pipeline.Engine, b Backend, o PushOptions) (*PushSummary, error) {
	rec := provenance.New(eng)
	xs, err := rec.Explain()
	if err != nil {
		return nil, err
	}
	var missing []string
	var outs []TaskOutput
	for _, x := range xs {
		if x.Do != provenance.WouldCache {
			missing = append(missing, x.Task)
		}
		outs = append(outs, TaskOutput{Task: x.Task, Output: x.Output})
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %d of %d task(s) are not recorded for this binary and dag.yaml in %s, e.g. %s; run them first",
			ErrNotRecorded, len(missing), len(xs), eng.Store.Root(), strings.Join(missing[:min(3, len(missing))], ", "))
	}
	return PushOutputs(ctx, eng, b, outs, o)
}

// TaskOutput is one recorded output of a task.
type TaskOutput struct{ Task, Output string }

// PushOutputs is Push of the given recorded outputs (run --remote pushes
// each task's as it finishes).
func PushOutputs(ctx context.Context, eng *pipeline.Engine, b Backend, outs []TaskOutput, o PushOptions) (*PushSummary, error) {
	rec := provenance.New(eng)
	spool, err := os.CreateTemp("", "pipeline-push-*")
	if err != nil {
		return nil, err
	}
	os.Remove(spool.Name()) // unlinked: the open file is the only reference
	defer spool.Close()

	sum := &PushSummary{Remote: b.String(), Tasks: len(outs), Added: []string{}}
	ups := map[string]upload{}
	known := map[string]Entry{}
	var entries []ActionEntry
	sp := &spooler{f: spool}
	add := func(r io.Reader) (Object, error) {
		o, open, err := sp.pack(r)
		if err == nil {
			ups[o.SHA256] = upload{key: ObjectKey(o.SHA256), obj: o, open: open}
		}
		return o, err
	}
	for _, x := range outs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r, err := bundle.Collect(eng, rec, x.Task, x.Output)
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(r); err != nil {
			return nil, err
		}
		robj, err := add(&buf)
		if err != nil {
			return nil, err
		}
		ae := ActionEntry{Format: Format, Task: r.Task, Action: r.Action, Output: r.Output, Record: robj, Inputs: inputsOf(r.Transcript)}
		for _, id := range r.Entries {
			e, ok := known[id]
			if !ok {
				sid, err := store.ParseID(id)
				if err != nil {
					return nil, err
				}
				er, _, err := eng.Store.Open(sid) // checks the content ID as it reads
				if err != nil {
					return nil, fmt.Errorf("%s: %w", x.Task, err)
				}
				o, err := add(er)
				er.Close()
				if err != nil {
					return nil, fmt.Errorf("%s: entry %s: %w", x.Task, id, err)
				}
				e = Entry{ID: id, Object: o}
				known[id] = e
			}
			ae.Entries = append(ae.Entries, e)
		}
		entries = append(entries, ae)
	}
	objs := make([]upload, 0, len(ups))
	for _, u := range ups {
		objs = append(objs, u)
		sum.Bytes += u.obj.Bytes
	}
	slices.SortFunc(objs, func(a, b upload) int { return strings.Compare(a.key, b.key) })
	sum.Objects = len(objs)
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = 8
	}
	wrote := make([]bool, len(objs))
	err = parallel(ctx, jobs, objs, func(ctx context.Context, i int, u upload) error {
		var err error
		wrote[i], err = putObject(ctx, b, u)
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, w := range wrote {
		if w {
			sum.Uploaded++
			sum.UploadedBytes += objs[i].obj.Bytes
		}
	}

	// The action entries, once every object they name is there.
	tasks := make([]IndexTask, len(entries))
	added := make([]bool, len(entries))
	diverged := make([]string, len(entries))
	err = parallel(ctx, jobs, entries, func(ctx context.Context, i int, ae ActionEntry) error {
		data := ae.encode()
		key := ActionKey(ae.Action)
		err := b.Create(ctx, key, bytes.NewReader(data), int64(len(data)))
		switch {
		case err == nil:
			added[i] = true
		case errors.Is(err, ErrExists):
			cur, _, err := b.Load(ctx, key)
			if err != nil {
				return err
			}
			var have ActionEntry
			if err := json.Unmarshal(cur, &have); err != nil || have.Action != ae.Action {
				return fmt.Errorf("%w: %s/%s is not the action entry of %s (%v); delete it and push again", ErrDamaged, b, key, ae.Task, err)
			}
			if have.Output != ae.Output {
				diverged[i] = fmt.Sprintf("%s (action %s: the remote's output %s, this store's %s)", ae.Task, ae.Action, have.Output, ae.Output)
			}
			data = cur
		default:
			return err
		}
		tasks[i] = IndexTask{Task: ae.Task, Action: ae.Action, Output: ae.Output, Entry: sum256(data)}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if d := nonEmpty(diverged); len(d) > 0 {
		return nil, fmt.Errorf("%w: the index is left as it was; %d task(s): %s", ErrDiverged, len(d), strings.Join(d, "; "))
	}
	for i, a := range added {
		if a {
			sum.Added = append(sum.Added, entries[i].Task)
		} else {
			sum.Present++
		}
	}
	p := o.About
	p.Tasks, p.At = len(entries), time.Now().UTC().Format(time.RFC3339)
	if err := updateIndex(ctx, b, tasks, &p, o.Sign); err != nil {
		return nil, err
	}
	if o.Sign != nil {
		sum.SignedBy = o.Sign.Name
	}
	return sum, nil
}

// updateIndex merges tasks and the push into the index, retrying when
// another writer swapped it first, and signs it with k (without k, the
// signatures its change invalidates are dropped).
func updateIndex(ctx context.Context, b Backend, tasks []IndexTask, p *Pushed, k *Key) error {
	for try := 0; ; try++ {
		x := &Index{Format: Format}
		data, ver, err := b.Load(ctx, indexKey)
		switch {
		case errors.Is(err, ErrNotFound):
			ver = ""
		case err != nil:
			return err
		default:
			if x, err = decodeIndex(data, b.String()); err != nil {
				return err
			}
		}
		if d := x.merge(tasks, p); len(d) > 0 {
			return fmt.Errorf("%w: the index is left as it was; %d task(s): %s", ErrDiverged, len(d), strings.Join(d, "; "))
		}
		if k != nil {
			x.sign(k)
		} else {
			x.prune()
		}
		err = b.Swap(ctx, indexKey, x.encode(), ver)
		if err == nil || !errors.Is(err, ErrConflict) || try >= 100 {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(try%10+1) * 10 * time.Millisecond):
		}
	}
}

// putObject writes u unless the remote has it; it reports whether it
// wrote. An object of another size at u's key is damaged: named.
func putObject(ctx context.Context, b Backend, u upload) (bool, error) {
	size, err := b.Head(ctx, u.key)
	switch {
	case err == nil && size == u.obj.Bytes:
		return false, nil
	case err == nil:
		return false, fmt.Errorf("%w: %s/%s has %d bytes, its name says %d; delete it and push again", ErrDamaged, b, u.key, size, u.obj.Bytes)
	case !errors.Is(err, ErrNotFound):
		return false, err
	}
	r, err := u.open()
	if err != nil {
		return false, err
	}
	defer r.Close()
	err = b.Create(ctx, u.key, r, u.obj.Bytes)
	if errors.Is(err, ErrExists) {
		return false, nil // another pusher wrote it meanwhile
	}
	crashpoint.Hit("remote.object")
	return err == nil, err
}

// spooler compresses objects into a spool file (unlinked, so that nothing
// is left however the process ends), so that each is hashed once and
// uploaded from there.
type spooler struct {
	f   *os.File
	off int64
}

// pack compresses what r yields into the spool and returns the object
// and how to read its stored bytes.
func (s *spooler) pack(r io.Reader) (Object, func() (io.ReadSeekCloser, error), error) {
	start := s.off
	h := sha256.New()
	w := &offsetWriter{f: s.f, off: start}
	zw, _ := gzip.NewWriterLevel(io.MultiWriter(w, h), gzip.BestCompression)
	size, err := io.Copy(zw, r)
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		return Object{}, nil, err
	}
	n := w.off - start
	s.off = w.off
	o := Object{SHA256: hex.EncodeToString(h.Sum(nil)), Bytes: n, Size: size}
	return o, func() (io.ReadSeekCloser, error) { return nopCloser{io.NewSectionReader(s.f, start, n)}, nil }, nil
}

// offsetWriter writes at increasing offsets of a file.
type offsetWriter struct {
	f   *os.File
	off int64
}

func (w *offsetWriter) Write(p []byte) (int, error) {
	n, err := w.f.WriteAt(p, w.off)
	w.off += int64(n)
	return n, err
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

type nopCloser struct{ io.ReadSeeker }

func (nopCloser) Close() error { return nil }

// inputsOf reads the "input SLOT TASK OUTPUT" lines of a transcript.
func inputsOf(transcript string) []Input {
	var out []Input
	for _, l := range strings.Split(transcript, "\n") {
		if f := strings.Fields(l); len(f) == 4 && f[0] == "input" {
			out = append(out, Input{Task: f[2], Output: f[3]})
		}
	}
	return out
}
