package bundle

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
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
	"strconv"
	"strings"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/atomicfile"
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
// pass the targets' closure) as o says, atomically (in volumes: each
// volume, then the index). Every task must have a recorded output, intact
// in the store.
func Export(eng *pipeline.Engine, tasks []*dag.Task, o Options) (*ExportSummary, error) {
	rec := provenance.New(eng)
	states, err := eng.Events.LastStates()
	if err != nil {
		return nil, err
	}
	last := map[string]events.StateRecord{}
	for _, s := range states {
		last[s.Task] = s
	}
	var records []Record
	var missing []string
	for _, t := range tasks {
		s, ok := last[t.Path]
		if !ok || s.Output == "" || (s.State != events.StateDone && s.State != events.StateCached) {
			missing = append(missing, t.Path)
			continue
		}
		r, err := record(eng, rec, t.Path, s.Output)
		if err != nil {
			return nil, err
		}
		records = append(records, *r)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %d task(s) have no finished output in %s, e.g. %s; run them first", ErrNotRecorded, len(missing), eng.Store.Root(), strings.Join(missing[:min(3, len(missing))], ", "))
	}
	sum := &ExportSummary{File: o.File, Tasks: len(records)}
	m := Manifest{Format: Format, Code: o.Code, Profile: o.Profile, Targets: o.Targets}
	if o.VolumeSize > 0 {
		sum.Volumes, err = writeVolumes(o.File, o.VolumeSize, func(w io.Writer) error { return write(w, eng.Store, records, m, sum) })
		if err == nil {
			err = writeIndex(o.File, sum.Volumes)
		}
		for _, v := range sum.Volumes {
			sum.Bytes += v.Bytes
		}
	} else {
		err = atomicfile.Write(o.File, func(f *os.File) error { return write(f, eng.Store, records, m, sum) })
		if fi, serr := os.Stat(o.File); err == nil && serr == nil {
			sum.Bytes = fi.Size()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", o.File, err)
	}
	return sum, nil
}

// record gathers what a bundle carries of task's production of output.
func record(eng *pipeline.Engine, rec *provenance.Record, taskPath, output string) (*Record, error) {
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

// write writes the bundle: the entries, the records, then the manifest.
// Every header has a fixed time, so the same records give the same bytes.
func write(f io.Writer, st *store.Store, records []Record, m Manifest, sum *ExportSummary) error {
	zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	m.Members = map[string]string{}
	put := func(name string, data []byte) error {
		h := sha256.Sum256(data)
		m.Members[name] = hex.EncodeToString(h[:])
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0).UTC(), Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	seen := map[string]bool{}
	for i, r := range records {
		for _, id := range r.Entries {
			if seen[id] {
				continue
			}
			seen[id] = true
			sid, err := store.ParseID(id)
			if err != nil {
				return err
			}
			data, err := st.Get(sid)
			if err != nil {
				return fmt.Errorf("%s: %w", r.Task, err)
			}
			if err := put("cas/"+id, data); err != nil {
				return err
			}
			sum.Entries++
			sum.EntryBytes += int64(len(data))
		}
		var rb bytes.Buffer
		if err := gob.NewEncoder(&rb).Encode(r); err != nil {
			return err
		}
		name := "tasks/" + strconv.Itoa(i) + ".gob"
		if err := put(name, rb.Bytes()); err != nil {
			return err
		}
		m.Tasks = append(m.Tasks, TaskEntry{Task: r.Task, Action: r.Action, Output: r.Output, Record: name})
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

// ImportSummary is what Import did.
type ImportSummary struct {
	File string `json:"file"`
	// Run is the run that recorded the imported tasks (0: none imported).
	Run uint64 `json:"run"`
	// Imported tasks were recorded; Present ones the store already had
	// with the same output; Other ones have another action here (another
	// code identity or other parameters) and were left out, as were
	// Unplanned ones (not in this plan).
	Imported  []string `json:"imported"`
	Present   []string `json:"present"`
	Other     []string `json:"other_action"`
	Unplanned []string `json:"not_in_plan"`
	Entries   int      `json:"entries"`
	Code      string   `json:"bundle_code_identity"`
	Profile   string   `json:"bundle_profile"`
}

// Read checks a bundle (every member against the manifest, every entry
// against its content ID) and returns its manifest and task records.
func Read(path string) (*Manifest, map[string]*Record, error) {
	sums := map[string]string{}
	small := map[string][]byte{}
	err := members(path, true, func(name string, r io.Reader) error {
		if _, dup := sums[name]; dup {
			return fmt.Errorf("%w: member %s appears twice", ErrBundle, name)
		}
		h := sha256.New()
		var buf []byte
		switch {
		case strings.HasPrefix(name, "cas/"):
			id, err := store.ParseID(strings.TrimPrefix(name, "cas/"))
			if err != nil {
				return fmt.Errorf("%w: member %s: %v", ErrBundle, name, err)
			}
			data, err := io.ReadAll(io.TeeReader(r, h))
			if err != nil {
				return err
			}
			if store.Sum(data) != id {
				return fmt.Errorf("%w: entry %s does not hash to its name", ErrBundle, name)
			}
		case name == "manifest.json" || strings.HasPrefix(name, "tasks/"):
			var err error
			if buf, err = io.ReadAll(io.TeeReader(r, h)); err != nil {
				return err
			}
			small[name] = buf
		default:
			return fmt.Errorf("%w: unexpected member %s", ErrBundle, name)
		}
		sums[name] = hex.EncodeToString(h.Sum(nil))
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var m Manifest
	if err := json.Unmarshal(small["manifest.json"], &m); err != nil || m.Format != Format {
		return nil, nil, fmt.Errorf("%w: no manifest of format %d (%v)", ErrBundle, Format, err)
	}
	delete(sums, "manifest.json")
	for name, want := range m.Members {
		if got, ok := sums[name]; !ok {
			return nil, nil, fmt.Errorf("%w: member %s is missing", ErrBundle, name)
		} else if got != want {
			return nil, nil, fmt.Errorf("%w: member %s has SHA-256 %s, the manifest says %s", ErrBundle, name, got, want)
		}
	}
	for name := range sums {
		if _, ok := m.Members[name]; !ok {
			return nil, nil, fmt.Errorf("%w: member %s is not in the manifest", ErrBundle, name)
		}
	}
	records := map[string]*Record{}
	for _, te := range m.Tasks {
		var r Record
		if err := gob.NewDecoder(bytes.NewReader(small[te.Record])).Decode(&r); err != nil || r.Task != te.Task || r.Action != te.Action || r.Output != te.Output {
			return nil, nil, fmt.Errorf("%w: record %s of %s does not match the manifest (%v)", ErrBundle, te.Record, te.Task, err)
		}
		for _, id := range r.Entries {
			if _, ok := sums["cas/"+id]; !ok {
				return nil, nil, fmt.Errorf("%w: %s's entry %s is not in the bundle", ErrBundle, r.Task, id)
			}
		}
		records[r.Task] = &r
	}
	return &m, records, nil
}

// members calls fn for each member of the bundle at path, in order.
// hashVolumes: check each volume's SHA-256 first (the first pass; the
// second pass's members are checked against their content IDs anyway).
func members(path string, hashVolumes bool, fn func(name string, r io.Reader) error) error {
	f, err := openBundle(path, hashVolumes)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrBundle, path, err)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrBundle, path, err)
		}
		if hdr.Typeflag != tar.TypeReg || filepath.Clean(hdr.Name) != hdr.Name || strings.HasPrefix(hdr.Name, "/") || strings.Contains(hdr.Name, "..") {
			return fmt.Errorf("%w: %s: member %q is not a plain file name", ErrBundle, path, hdr.Name)
		}
		if err := fn(hdr.Name, tr); err != nil {
			return err
		}
	}
}

// Import checks the bundle at path and merges it into the store and event
// log of the engine open returns, given the bundle's manifest (see the
// package documentation). Its Plan is the importing plan: a task is
// imported only when this plan, this binary's code and the bundle's
// upstream outputs give it the bundle's action.
func Import(path string, open func(*Manifest) (*pipeline.Engine, error), info json.RawMessage) (*ImportSummary, error) {
	m, records, err := Read(path)
	if err != nil {
		return nil, err
	}
	eng, err := open(m)
	if err != nil {
		return nil, err
	}
	sum := &ImportSummary{File: path, Code: m.Code, Profile: m.Profile, Imported: []string{}, Present: []string{}, Other: []string{}, Unplanned: []string{}}
	outputs := map[string]string{}
	for _, te := range m.Tasks {
		outputs[te.Task] = te.Output
	}
	var todo []*Record
	var diverged []string
	for _, te := range m.Tasks {
		r := records[te.Task]
		t := eng.Plan.Task(te.Task)
		if t == nil {
			sum.Unplanned = append(sum.Unplanned, te.Task)
			continue
		}
		lines, err := pipeline.Transcript(t, eng.Code, eng.Platform, outputs)
		if err != nil {
			return nil, err
		}
		if pipeline.Action(lines).String() != r.Action {
			sum.Other = append(sum.Other, te.Task)
			continue
		}
		have, ok, err := eng.Events.Action(r.Action)
		switch {
		case err != nil:
			return nil, err
		case ok && have.Output != r.Output:
			diverged = append(diverged, fmt.Sprintf("%s (action %s: the bundle's output %s, this store's %s)", r.Task, r.Action, r.Output, have.Output))
		case ok && eng.VerifyOutput(have.Output) == nil:
			sum.Present = append(sum.Present, te.Task)
		default:
			todo = append(todo, r)
		}
	}
	if len(diverged) > 0 {
		return nil, fmt.Errorf("%w: nothing imported; %d task(s): %s", ErrDiverged, len(diverged), strings.Join(diverged, "; "))
	}
	if len(todo) == 0 {
		return sum, nil
	}
	want := map[string]bool{}
	for _, r := range todo {
		for _, id := range r.Entries {
			want["cas/"+id] = true
		}
	}
	err = members(path, false, func(name string, rd io.Reader) error {
		if !want[name] {
			return nil
		}
		data, err := io.ReadAll(rd)
		if err != nil {
			return err
		}
		id, err := eng.Store.Put(data)
		if err != nil {
			return err
		}
		if "cas/"+id.String() != name {
			return fmt.Errorf("%w: entry %s changed since it was checked", ErrBundle, name)
		}
		sum.Entries++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if sum.Run, err = recordTasks(eng.Events, todo, info); err != nil {
		return nil, err
	}
	for _, r := range todo {
		sum.Imported = append(sum.Imported, r.Task)
	}
	return sum, nil
}

// recordTasks records the imported tasks as one run of their own.
func recordTasks(log *events.Log, todo []*Record, info json.RawMessage) (uint64, error) {
	run, err := log.BeginRun(info, time.Now().UnixNano())
	if err != nil {
		return 0, err
	}
	w := log.NewWriter(events.WriterOptions{})
	now := time.Now().UnixNano()
	for _, r := range todo {
		w.Append(events.Event{Type: events.TypeTranscript, Run: run, Task: r.Task, Action: r.Action, Transcript: r.Transcript})
		w.Append(events.Event{Type: events.TypeState, Run: run, Task: r.Task, State: events.StateStarted, Action: r.Action, Time: now})
		if len(r.Streams) > 0 {
			w.Append(events.Event{Type: events.TypeStreams, Run: run, Task: r.Task, Action: r.Action, Data: r.Streams})
		}
		for i := 0; i < len(r.Iters); i += 1000 {
			w.Append(events.Event{Type: events.TypeIter, Run: run, Task: r.Task, Iters: slices.Clone(r.Iters[i:min(i+1000, len(r.Iters))])})
		}
		for _, n := range r.Notes {
			w.Append(events.Event{Type: events.TypeNote, Run: run, Task: r.Task, Data: n})
		}
		w.Append(events.Event{Type: events.TypeState, Run: run, Task: r.Task, State: events.StateDone, Action: r.Action, Output: r.Output, Time: now, Data: r.Done})
	}
	summary, _ := json.Marshal(map[string]int{"imported": len(todo)})
	w.Append(events.Event{Type: events.TypeRun, Run: run, State: events.RunFinished, Time: time.Now().UnixNano(), Data: summary})
	if err := w.Close(); err != nil {
		return 0, err
	}
	return run, nil
}

// IndexFormat is the version of a volume index.
const IndexFormat = 1

// MinVolumeSize is the smallest volume size the command line takes: a
// size meant in MiB but given in bytes would write thousands of files.
const MinVolumeSize = 1 << 20

// Index is what the bundle file holds when the bundle is cut into volumes:
// the volumes in order, each with its size and SHA-256. Their
// concatenation is the bundle, byte for byte what one file would hold.
type Index struct {
	Format  int      `json:"bundle_volumes_format"`
	Bytes   int64    `json:"bytes"`
	Volumes []Volume `json:"volumes"`
}

// Volume is one piece of a bundle cut into volumes.
type Volume struct {
	// File is its name, in the index's directory.
	File   string `json:"file"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// volumeName is the name of the i-th (from 1) volume of the bundle file
// path.
func volumeName(path string, i int) string {
	return fmt.Sprintf("%s.%03d", path, i)
}

// writeVolumes writes what fill writes as volumes path.001, path.002, …
// of at most size bytes each (each published atomically), removes
// volumes of an earlier export beyond the last, and returns them. On
// error the volumes this call wrote are removed.
func writeVolumes(path string, size int64, fill func(io.Writer) error) ([]Volume, error) {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(fill(pw)) }()
	in := bufio.NewReaderSize(pr, 1<<20)
	var vols []Volume
	fail := func(err error) ([]Volume, error) {
		pr.CloseWithError(err) // stops fill if it is still writing
		for i := range vols {
			os.Remove(volumeName(path, i+1))
		}
		return nil, err
	}
	for i := 1; ; i++ {
		if _, err := in.Peek(1); err == io.EOF {
			break
		} else if err != nil {
			return fail(err)
		}
		name := volumeName(path, i)
		h := sha256.New()
		var n int64
		err := atomicfile.Write(name, func(f *os.File) error {
			var err error
			n, err = io.CopyN(io.MultiWriter(f, h), in, size)
			if err == io.EOF {
				err = nil
			}
			return err
		})
		if err != nil {
			return fail(err)
		}
		vols = append(vols, Volume{File: filepath.Base(name), Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))})
	}
	for i := len(vols) + 1; ; i++ {
		if err := os.Remove(volumeName(path, i)); err != nil {
			break
		}
	}
	return vols, nil
}

// writeIndex publishes the index of vols at path.
func writeIndex(path string, vols []Volume) error {
	ix := Index{Format: IndexFormat, Volumes: vols}
	for _, v := range vols {
		ix.Bytes += v.Bytes
	}
	js, err := json.MarshalIndent(ix, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(js, '\n'))
}

// openBundle opens the bundle at path: the file itself, or, when it is a
// volume index, its volumes in order, each checked first against the
// index's size and (with hashVolumes) SHA-256.
func openBundle(path string, hashVolumes bool) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(f)
	head, _ := br.Peek(2)
	if bytes.Equal(head, []byte{0x1f, 0x8b}) { // gzip: a bundle in one file
		return readCloser{br, f}, nil
	}
	defer f.Close()
	var ix Index
	dec := json.NewDecoder(io.LimitReader(br, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ix); err != nil || ix.Format != IndexFormat || len(ix.Volumes) == 0 {
		return nil, fmt.Errorf("%w: %s is neither a bundle nor an index of its volumes (%v)", ErrBundle, path, errors.Join(err, fmt.Errorf("format %d, %d volumes", ix.Format, len(ix.Volumes))))
	}
	return openVolumes(path, ix, hashVolumes)
}

// openVolumes checks the volumes ix lists, in path's directory, and opens
// them as one reader. A volume that is missing, of another size than the
// index says or with another SHA-256 is an ErrBundle naming it: the
// download to repeat.
func openVolumes(path string, ix Index, hashVolumes bool) (io.ReadCloser, error) {
	dir := filepath.Dir(path)
	bad := func(i int, what string) error {
		return fmt.Errorf("%w: volume %s (%d of %d, listed in %s): %s", ErrBundle, ix.Volumes[i].File, i+1, len(ix.Volumes), path, what)
	}
	var total int64
	for i, v := range ix.Volumes {
		if v.File != filepath.Base(v.File) || v.File == ".." || strings.ContainsAny(v.File, `/\`) {
			return nil, bad(i, "not a plain file name")
		}
		fi, err := os.Stat(filepath.Join(dir, v.File))
		switch {
		case err != nil:
			return nil, bad(i, err.Error())
		case fi.Size() != v.Bytes:
			return nil, bad(i, fmt.Sprintf("%d bytes, the index says %d (an incomplete download?)", fi.Size(), v.Bytes))
		}
		total += v.Bytes
	}
	if total != ix.Bytes {
		return nil, fmt.Errorf("%w: %s: its volumes add up to %d bytes, the index says %d", ErrBundle, path, total, ix.Bytes)
	}
	vs := &volumes{}
	for i, v := range ix.Volumes {
		f, err := os.Open(filepath.Join(dir, v.File))
		if err != nil {
			vs.Close()
			return nil, bad(i, err.Error())
		}
		vs.files = append(vs.files, f)
		if !hashVolumes {
			continue
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		if err == nil {
			_, err = f.Seek(0, io.SeekStart)
		}
		if err != nil {
			vs.Close()
			return nil, bad(i, err.Error())
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != v.SHA256 {
			vs.Close()
			return nil, bad(i, fmt.Sprintf("SHA-256 %s, the index says %s", got, v.SHA256))
		}
	}
	rs := make([]io.Reader, len(vs.files))
	for i, f := range vs.files {
		rs[i] = f
	}
	vs.Reader = io.MultiReader(rs...)
	return vs, nil
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}

// volumes reads a bundle's open volumes in order.
type volumes struct {
	io.Reader
	files []*os.File
}

func (v *volumes) Close() error {
	var errs []error
	for _, f := range v.files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}
