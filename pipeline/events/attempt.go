package events

// Attempt files. An attempt file is the event record of one task attempt
// that ran in another process (a Slurm worker), which must not touch the
// log; the coordinator reads it with ReadAttempt and merges its events.
//
//	file    magic ‖ frame(header) ‖ frame(event)* ‖ [frame(end)]
//	magic   "zorepro-attempt 1\n"
//	frame   uvarint(len(payload)) ‖ payload ‖ 8-byte BE digest, where digest =
//	        xxhash64(previous frame's digest bytes ‖ payload), and the first
//	        frame's previous digest is xxhash64(magic)
//	header  'H' ‖ JSON AttemptHeader (its strings valid UTF-8)
//	event   'V' ‖ u run ‖ u time ‖ str type, task, state, action, output,
//	        transcript, error, data ‖ (u 0 | u 1 ‖ str content ‖ u iteration)
//	        for Checkpoint ‖ (u 0 | u 1 ‖ u iteration ‖ block of Iter |
//	        u 2 ‖ u first iteration ‖ block of Iters)
//	end     'E' ‖ u number of event frames
//
// u is a uvarint (int64s as uint64), str is u len ‖ bytes, and a block is
// the "iter" value of doc.go (appendBlock), so metric values are bit-exact.
// Fields are binary, not JSON, because JSON compacts and escapes Data and
// replaces invalid UTF-8: an event reads back exactly as appended, except
// that Seq is 0 and nil and empty slices are the same. Every payload must
// be the one encoding of what it decodes to, so a file is a function of
// its header and events.
//
// The chain means frames cannot be reordered, dropped from the middle or
// spliced from another file (unless both agree up to them). Each frame is one write(2), so a killed writer
// leaves whole frames and at most one torn frame at the end. A torn tail
// (the bytes left are shorter than a uvarint or than the frame they
// announce, or the last frame's digest is wrong with nothing after it) is
// not an error: ReadAttempt returns the events before it. A damaged length
// prefix that points past the end of the file looks like a torn tail.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"

	"zorepro/pipeline/task"
)

const attemptMagic = "zorepro-attempt 1\n"

// Payload kinds.
const (
	kindHeader = 'H'
	kindEvent  = 'V'
	kindEnd    = 'E'
)

// AttemptHeader identifies one attempt of one task.
type AttemptHeader struct {
	Task    string `json:"task"`
	Action  string `json:"action"`
	Attempt string `json:"attempt"` // the coordinator's name for this attempt, unique in its store
}

// AttemptWriter appends the events of one attempt to its file.
type AttemptWriter struct {
	path, task string

	mu     sync.Mutex
	f      *os.File // nil once closed
	prev   uint64   // digest of the last frame written
	events uint64   // event frames written
	err    error    // first write error; later frames would follow a torn one
}

// CreateAttempt creates the attempt file at path, which must not exist,
// and writes and fsyncs its header. A process killed inside it can leave
// a file without a whole header, which ReadAttempt reports as corrupt.
func CreateAttempt(path string, h AttemptHeader) (*AttemptWriter, error) {
	if err := checkHeader(h); err != nil {
		return nil, fmt.Errorf("events: create attempt file %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	w := &AttemptWriter{path: path, task: h.Task, f: f, prev: xxhash.Sum64String(attemptMagic)}
	var b []byte
	b, w.prev = appendFrame([]byte(attemptMagic), w.prev, headerPayload(h))
	if _, err = f.Write(b); err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("events: create attempt file %s: %w", path, err)
	}
	return w, nil
}

// Append writes ev as one frame with one write(2) call. ev must pass the
// checks of Writer.Append and belong to the header's task; ev.Seq is
// ignored. After a write error every later call returns that error. Append
// is safe for concurrent use.
func (w *AttemptWriter) Append(ev Event) error {
	if err := validate(&ev); err != nil {
		return w.wrap(err)
	}
	if ev.Task != w.task {
		return fmt.Errorf("%w: event of task %q in the attempt file %s of task %q", ErrInvalidEvent, ev.Task, w.path, w.task)
	}
	payload := appendEvent(nil, &ev)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return err
	}
	if err := w.write(payload); err != nil {
		return err
	}
	w.events++
	return nil
}

// Sync fsyncs the file, e.g. after a checkpoint event.
func (w *AttemptWriter) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return err
	}
	return w.wrap(w.f.Sync())
}

// Close writes the end frame, fsyncs and closes the file. After a write
// error it only closes, so the file reads back as incomplete. Calling it
// again returns an error wrapping fs.ErrClosed.
func (w *AttemptWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return w.usable()
	}
	err := w.err
	if err == nil {
		err = w.write(binary.AppendUvarint([]byte{kindEnd}, w.events))
	}
	if err == nil {
		err = w.wrap(w.f.Sync())
	}
	if cerr := w.f.Close(); err == nil {
		err = w.wrap(cerr)
	}
	w.f = nil
	return err
}

func (w *AttemptWriter) usable() error {
	if w.f == nil {
		return w.wrap(fs.ErrClosed)
	}
	return w.err
}

func (w *AttemptWriter) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("events: attempt file %s: %w", w.path, err)
}

// write writes one frame; w.mu is held.
func (w *AttemptWriter) write(payload []byte) error {
	b, sum := appendFrame(nil, w.prev, payload)
	if _, err := w.f.Write(b); err != nil {
		w.err = w.wrap(err)
		return w.err
	}
	w.prev = sum
	return nil
}

// Attempt is what ReadAttempt found in a file.
type Attempt struct {
	Header   AttemptHeader
	Events   []Event // every event of the valid frames, in order, decoded exactly as appended (Seq is 0)
	Complete bool    // the end frame was read, its count matches and nothing follows it
}

// ReadAttempt reads an attempt file. A torn or missing tail is not an
// error: Events holds the valid prefix and Complete is false. Damage is
// reported as an error wrapping ErrCorruptAttempt that names the byte
// offset; a missing file as one wrapping fs.ErrNotExist.
func ReadAttempt(path string) (*Attempt, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseAttempt(path, b)
}

func parseAttempt(path string, b []byte) (*Attempt, error) {
	corrupt := func(off int, format string, args ...any) error {
		return fmt.Errorf("%w: %s: offset %d: %s", ErrCorruptAttempt, path, off, fmt.Sprintf(format, args...))
	}
	if !bytes.HasPrefix(b, []byte(attemptMagic)) {
		return nil, corrupt(0, "no %q line", strings.TrimSpace(attemptMagic))
	}
	a, header, ended := &Attempt{}, false, false
	prev := xxhash.Sum64String(attemptMagic)
	for off := len(attemptMagic); off < len(b); {
		if ended {
			return nil, corrupt(off, "data after the end frame")
		}
		l, n := binary.Uvarint(b[off:])
		if n < 0 {
			return nil, corrupt(off, "bad frame length")
		}
		left := uint64(len(b) - off - n)
		if n == 0 || l > left || left-l < 8 {
			break // torn tail
		}
		p, end := b[off+n:off+n+int(l)], off+n+int(l)+8
		sum := binary.BigEndian.Uint64(b[end-8 : end])
		if sum != chainDigest(prev, p) {
			if end == len(b) && header {
				break // torn tail: the last frame
			}
			return nil, corrupt(off, "frame digest mismatch (frame of %d bytes)", end-off)
		}
		prev = sum
		var kind byte
		if len(p) > 0 {
			kind = p[0]
		}
		switch {
		case !header && kind == kindHeader:
			err := json.Unmarshal(p[1:], &a.Header)
			if err == nil {
				err = checkHeader(a.Header)
			}
			if err == nil && !bytes.Equal(headerPayload(a.Header), p) {
				err = errors.New("not in canonical form")
			}
			if err != nil {
				return nil, corrupt(off, "header: %v", err)
			}
			header = true
		case !header:
			return nil, corrupt(off, "first frame is not a header")
		case kind == kindHeader:
			return nil, corrupt(off, "second header frame")
		case kind == kindEvent:
			ev, err := decodeEvent(p)
			if err != nil {
				return nil, corrupt(off, "event %d: %v", len(a.Events), err)
			}
			if ev.Task != a.Header.Task {
				return nil, corrupt(off, "event %d is of task %q, the attempt of task %q", len(a.Events), ev.Task, a.Header.Task)
			}
			a.Events = append(a.Events, ev)
		case kind == kindEnd:
			count, _ := binary.Uvarint(p[1:])
			if !bytes.Equal(p, binary.AppendUvarint([]byte{kindEnd}, count)) {
				return nil, corrupt(off, "bad end frame")
			}
			if count != uint64(len(a.Events)) {
				return nil, corrupt(off, "end frame counts %d events, the file has %d", count, len(a.Events))
			}
			ended = true
		default:
			return nil, corrupt(off, "unknown frame kind %q", kind)
		}
		off = end
	}
	if !header {
		return nil, corrupt(len(attemptMagic), "missing or torn header frame")
	}
	a.Complete = ended
	return a, nil
}

// checkHeader reports why h cannot be an attempt's header, or nil.
func checkHeader(h AttemptHeader) error {
	if h.Task == "" || h.Attempt == "" {
		return errors.New("task and attempt must be set")
	}
	if !utf8.ValidString(h.Task) || !utf8.ValidString(h.Action) || !utf8.ValidString(h.Attempt) {
		return errors.New("task, action and attempt must be valid UTF-8")
	}
	return nil
}

func headerPayload(h AttemptHeader) []byte {
	b, _ := json.Marshal(h) // cannot fail: three strings
	return append([]byte{kindHeader}, b...)
}

// appendFrame appends the frame of payload after the frame whose digest is
// prev, and returns the new frame's digest.
func appendFrame(b []byte, prev uint64, payload []byte) ([]byte, uint64) {
	sum := chainDigest(prev, payload)
	b = binary.AppendUvarint(b, uint64(len(payload)))
	b = append(b, payload...)
	return binary.BigEndian.AppendUint64(b, sum), sum
}

func chainDigest(prev uint64, payload []byte) uint64 {
	d := xxhash.New()
	d.Write(binary.BigEndian.AppendUint64(make([]byte, 0, 8), prev))
	d.Write(payload)
	return d.Sum64()
}

// eventStrings are ev's string fields in payload order.
func eventStrings(ev *Event) [7]*string {
	return [...]*string{(*string)(&ev.Type), &ev.Task, &ev.State, &ev.Action, &ev.Output, &ev.Transcript, &ev.Error}
}

// appendEvent appends the 'V' payload of ev (see the format above).
func appendEvent(b []byte, ev *Event) []byte {
	u := func(v uint64) { b = binary.AppendUvarint(b, v) }
	b = append(b, kindEvent)
	u(ev.Run)
	u(uint64(ev.Time))
	for _, s := range eventStrings(ev) {
		u(uint64(len(*s)))
		b = append(b, *s...)
	}
	u(uint64(len(ev.Data)))
	b = append(b, ev.Data...)
	if c := ev.Checkpoint; c != nil {
		u(1)
		u(uint64(len(c.Content)))
		b = append(b, c.Content...)
		u(uint64(c.Iteration))
	} else {
		u(0)
	}
	switch {
	case ev.Iter != nil:
		u(1)
		u(uint64(ev.Iter.Iteration))
		b = appendBlock(b, []task.Iter{*ev.Iter})
	case len(ev.Iters) > 0:
		u(2)
		u(uint64(ev.Iters[0].Iteration))
		b = appendBlock(b, ev.Iters)
	default:
		u(0)
	}
	return b
}

// decodeEvent decodes and validates a payload written by appendEvent. It
// never panics and allocates no more than p justifies.
func decodeEvent(p []byte) (Event, error) {
	var ev Event
	d := payloadReader{b: p[1:]}
	ev.Run, ev.Time = d.uvarint(), int64(d.uvarint())
	for _, s := range eventStrings(&ev) {
		*s = d.str()
	}
	if data := d.str(); data != "" {
		ev.Data = json.RawMessage(data)
	}
	if d.uvarint() == 1 {
		ev.Checkpoint = &Checkpoint{Content: d.str(), Iteration: int64(d.uvarint())}
	}
	if kind := d.uvarint(); kind == 1 || kind == 2 {
		its, err := decodeBlock(int64(d.uvarint()), d.b)
		if err != nil {
			return Event{}, errors.New(strings.TrimPrefix(err.Error(), ErrCorruptLog.Error()+": "))
		}
		if kind == 2 {
			ev.Iters = its
		} else if len(its) == 1 {
			ev.Iter = &its[0]
		}
	}
	if d.bad {
		return Event{}, errors.New("truncated")
	}
	if err := validate(&ev); err != nil {
		return Event{}, err
	}
	if !bytes.Equal(appendEvent(nil, &ev), p) {
		return Event{}, errors.New("not in canonical form")
	}
	return ev, nil
}

// payloadReader reads the fields of a payload; after the first short
// field, bad is set and every read returns a zero value.
type payloadReader struct {
	b   []byte
	bad bool
}

func (d *payloadReader) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.b, d.bad = nil, true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *payloadReader) str() string {
	l := d.uvarint()
	if l > uint64(len(d.b)) {
		d.b, d.bad = nil, true
		return ""
	}
	s := string(d.b[:l])
	d.b = d.b[l:]
	return s
}

// syncDir fsyncs a directory so that a file created in it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
