package bundle

import (
	"archive/tar"
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
	"strconv"
	"strings"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/atomicfile"
	"zorepro/pipeline/crashpoint"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/events"
	"zorepro/pipeline/provenance"
	"zorepro/pipeline/store"
	"zorepro/pipeline/task"
)

// Format is the bundle format's version.
const Format = 1

// Manifest is a bundle's table of contents, its last member.
type Manifest struct {
	Format int `json:"format"`
	// Code is the code identity (the manifest stamp) of the binary that
	// wrote the bundle; Profile the profile its tasks were recorded under.
	Code    string   `json:"code_identity"`
	Profile string   `json:"profile"`
	Targets []string `json:"targets"`
	// Tasks are the bundled tasks in plan order.
	Tasks []TaskEntry `json:"tasks"`
	// Members is the SHA-256 (hex) of every other member, by name.
	Members map[string]string `json:"members"`
}

// TaskEntry is one bundled task.
type TaskEntry struct {
	Task   string `json:"task"`
	Action string `json:"action"`
	Output string `json:"output"`
	Record string `json:"record"` // its member, tasks/<n>.gob
}

// Record is what a bundle carries of one task's recorded run: enough for
// the importing store to cache its action and to audit, replay and verify
// it. It is stored gob-encoded (iteration metrics may be NaN or infinite,
// which JSON cannot hold).
type Record struct {
	Task       string            `json:"task"`
	Action     string            `json:"action"`
	Output     string            `json:"output"`
	Transcript string            `json:"transcript"`
	Streams    json.RawMessage   `json:"streams,omitempty"`
	Iters      []task.Iter       `json:"iters,omitempty"`
	Notes      []json.RawMessage `json:"notes,omitempty"`
	Done       json.RawMessage   `json:"done,omitempty"`
	// Entries are the content IDs of the output manifest and its files.
	Entries []string `json:"entries"`
}

// ErrNotRecorded is returned by Export for a task without a recorded
// output; ErrBundle by Import for a bundle (or one of its volumes) that
// fails a check; ErrDiverged by Import when the store records a bundled
// task's action with another output.
var (
	ErrNotRecorded = errors.New("bundle: task not recorded")
	ErrBundle      = errors.New("bundle: damaged or altered bundle")
	ErrDiverged    = errors.New("bundle: the store computed other bytes for the same action")
)

// Options says what Export writes and where.
type Options struct {
	// Code and Profile are the manifest's code identity and profile;
	// Targets the targets whose closure the tasks are.
	Code, Profile string
	Targets       []string
	// File is the bundle file; with VolumeSize > 0 the bundle is cut into
	// volumes File.001, File.002, … of at most VolumeSize bytes and File
	// is their index.
	File       string
	VolumeSize int64
}

// ExportSummary is what Export wrote.
type ExportSummary struct {
	File string `json:"file"`
	// Bytes is the bundle's size (in volumes: theirs together).
	Bytes   int64    `json:"bytes"`
	Volumes []Volume `json:"volumes,omitempty"`
	Tasks   int      `json:"tasks"`
	Entries int      `json:"entries"`
	// EntryBytes is the uncompressed size of the content entries.
	EntryBytes int64 `json:"entry_bytes"`
}

// Export writes the recorded outputs and events of tasks (in plan order;
// pass the targets' closure) as o says, atomically (in volumes: every
// volume, then the index). Every task must have a recorded output, intact
// in the store. Records and entries stream through (memory stays bounded
// whatever the tasks hold). When ctx is cancelled it stops within a
// member and leaves nothing it wrote (ctx's error is returned); temporary
// files a killed export left beside o.File are removed first.
func Export(ctx context.Context, eng *pipeline.Engine, tasks []*dag.Task, o Options) (*ExportSummary, error) {
	states, err := eng.Events.LastStates()
	if err != nil {
		return nil, err
	}
	last := map[string]events.StateRecord{}
	for _, s := range states {
		last[s.Task] = s
	}
	var outputs []string
	var missing []string
	for _, t := range tasks {
		s, ok := last[t.Path]
		if !ok || s.Output == "" || (s.State != events.StateDone && s.State != events.StateCached) {
			missing = append(missing, t.Path)
			continue
		}
		outputs = append(outputs, s.Output)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %d task(s) have no finished output in %s, e.g. %s; run them first", ErrNotRecorded, len(missing), eng.Store.Root(), strings.Join(missing[:min(3, len(missing))], ", "))
	}
	if _, err := atomicfile.RemoveStale(o.File); err != nil {
		return nil, fmt.Errorf("bundle %s: %w", o.File, err)
	}
	rec := provenance.New(eng)
	records := func(yield func(*Record) error) error {
		for i, t := range tasks {
			r, err := Collect(eng, rec, t.Path, outputs[i])
			if err != nil {
				return err
			}
			if err := yield(r); err != nil {
				return err
			}
		}
		return nil
	}
	sum := &ExportSummary{File: o.File, Tasks: len(tasks)}
	m := Manifest{Format: Format, Code: o.Code, Profile: o.Profile, Targets: o.Targets}
	fill := func(w io.Writer) error { return write(ctx, w, eng.Store, records, m, sum) }
	if o.VolumeSize > 0 {
		sum.Volumes, err = writeVolumes(o.File, o.VolumeSize, fill)
		for _, v := range sum.Volumes {
			sum.Bytes += v.Bytes
		}
	} else {
		err = atomicfile.Write(o.File, func(f *os.File) error { return fill(f) })
		if err == nil {
			removeVolumes(o.File, 1) // an earlier export's, cut into volumes at this name
		}
		if fi, serr := os.Stat(o.File); err == nil && serr == nil {
			sum.Bytes = fi.Size()
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", o.File, err)
	}
	return sum, nil
}

// Collect gathers what a bundle (or a remote) carries of a task's
// production of output, its entries checked against their content IDs.
func Collect(eng *pipeline.Engine, rec *provenance.Record, taskPath, output string) (*Record, error) {
	p, err := provenance.Produced(eng.Events, taskPath, output)
	if err != nil {
		return nil, err
	}
	es, err := rec.Checked(taskPath, output)
	if err != nil {
		return nil, err
	}
	r := &Record{Task: taskPath, Action: p.Action, Output: output, Transcript: strings.Join(p.Transcript, "\n"), Entries: []string{output}}
	for _, e := range es {
		r.Entries = append(r.Entries, e.ID.String())
	}
	if r.Iters, err = p.Iterations(eng.Events); err != nil {
		return nil, err
	}
	evs, err := eng.Events.Events(taskPath)
	if err != nil {
		return nil, err
	}
	runs := map[uint64]bool{}
	for _, s := range p.Segments {
		runs[s.Run] = true
	}
	for _, ev := range evs {
		switch {
		case !runs[ev.Run] && ev.Run != p.Run:
		case ev.Type == events.TypeStreams && ev.Run == p.Run:
			r.Streams = ev.Data
		case ev.Type == events.TypeNote:
			r.Notes = append(r.Notes, ev.Data)
		case ev.Type == events.TypeState && ev.State == events.StateDone && ev.Output == output && ev.Run == p.Run:
			r.Done = ev.Data
		}
	}
	return r, nil
}

// write writes the bundle: each record's entries not written before, the
// record, then the manifest. Every header has a fixed time, so the same
// records give the same bytes. It stops with ctx's error when ctx is
// cancelled.
func write(ctx context.Context, f io.Writer, st *store.Store, records func(yield func(*Record) error) error, m Manifest, sum *ExportSummary) error {
	zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	m.Members = map[string]string{}
	put := func(name string, size int64, r io.Reader) error {
		crashpoint.Hit("bundle.member")
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: size, ModTime: time.Unix(0, 0).UTC(), Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		h := sha256.New()
		if _, err := io.Copy(io.MultiWriter(tw, h), ctxReader{ctx, r}); err != nil {
			return err
		}
		m.Members[name] = hex.EncodeToString(h.Sum(nil))
		return nil
	}
	seen := map[string]bool{}
	i := 0
	err = records(func(r *Record) error {
		for _, id := range r.Entries {
			if seen[id] {
				continue
			}
			seen[id] = true
			sid, err := store.ParseID(id)
			if err != nil {
				return err
			}
			er, size, err := st.Open(sid)
			if err != nil {
				return fmt.Errorf("%s: %w", r.Task, err)
			}
			err = put("cas/"+id, size, er)
			er.Close()
			if err != nil {
				return fmt.Errorf("%s: entry %s: %w", r.Task, id, err)
			}
			sum.Entries++
			sum.EntryBytes += size
		}
		var rb bytes.Buffer
		if err := gob.NewEncoder(&rb).Encode(r); err != nil {
			return err
		}
		name := "tasks/" + strconv.Itoa(i) + ".gob"
		i++
		if err := put(name, int64(rb.Len()), &rb); err != nil {
			return err
		}
		m.Tasks = append(m.Tasks, TaskEntry{Task: r.Task, Action: r.Action, Output: r.Output, Record: name})
		return nil
	})
	if err != nil {
		return err
	}
	js, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	hdr := &tar.Header{Name: "manifest.json", Mode: 0o644, Size: int64(len(js)), ModTime: time.Unix(0, 0).UTC(), Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := tw.Write(js); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// ctxReader reads r until ctx is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
