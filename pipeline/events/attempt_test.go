package events

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/cespare/xxhash/v2"

	"zorepro/pipeline/task"
)

var testHeader = AttemptHeader{Task: "train/linreg/seed=5", Action: "act-5", Attempt: "attempt-000017"}

// attemptEvents is a little of everything one attempt can record,
// including values JSON could not carry exactly.
func attemptEvents(taskPath string) []Event {
	nan := math.Float64frombits(0x7ff8_0000_dead_beef) // a NaN with a payload
	return []Event{
		{Type: TypeState, Run: 3, Task: taskPath, Time: 1700000000123456789, State: StateStarted, Action: "act-5", Seq: 99},
		{Type: TypeTranscript, Run: 3, Task: taskPath, Action: "act-5", Transcript: "kind train\nseed 5\n"},
		{Type: TypeStreams, Run: 3, Task: taskPath, Data: json.RawMessage(`{ "streams": ["init", "noise"], "html": "<&>" }`)},
		{Type: TypeIter, Run: 3, Task: taskPath, Iter: &task.Iter{Iteration: 1, Samples: 64, Digest: 0xfeedface, Metrics: []task.Metric{
			{Name: "nan", Value: nan}, {Name: "negzero", Value: math.Copysign(0, -1)}, {Name: "inf", Value: math.Inf(1)}, {Name: "ninf", Value: math.Inf(-1)}}}},
		{Type: TypeIter, Run: 3, Task: taskPath, Iters: []task.Iter{
			{Iteration: 2, Samples: 128, Digest: 1, Metrics: []task.Metric{{Name: "loss", Value: 0.1}}},
			{Iteration: 3, Samples: 192, Digest: 2},
			{Iteration: 7, Samples: -1, Digest: math.MaxUint64, Metrics: []task.Metric{{Name: "", Value: math.SmallestNonzeroFloat64}}}}},
		{Type: TypeCheckpoint, Run: 3, Task: taskPath, Action: "act-5", Checkpoint: &Checkpoint{Content: "xxh64-0123456789abcdef", Iteration: 7}},
		{Type: TypeCheckpoint, Run: 3, Task: taskPath, Checkpoint: &Checkpoint{}},
		{Type: TypeNote, Task: taskPath, Error: "stderr: \xff\xfe not UTF-8", Time: -5},
		{Type: TypeRun, Run: 3, Task: taskPath, State: RunFailed},
		{Type: TypeState, Run: 3, Task: taskPath, State: StateFailed, Action: "act-5", Error: "diverged"},
		{Type: TypeState, Run: 3, Task: taskPath, State: StateDone, Action: "act-5", Output: "xxh64-fedcba9876543210"},
	}
}

// sameEvent reports whether got is want as ReadAttempt returns it: Seq 0
// and every metric value with the same bits.
func sameEvent(got, want Event) bool {
	want.Seq = 0
	var gi, wi []task.Iter
	if got.Iter != nil {
		gi = []task.Iter{*got.Iter}
	}
	if want.Iter != nil {
		wi = []task.Iter{*want.Iter}
	}
	gi, wi = append(gi, got.Iters...), append(wi, want.Iters...)
	if len(gi) != len(wi) || (got.Iter == nil) != (want.Iter == nil) {
		return false
	}
	for i := range gi {
		g, w := gi[i], wi[i]
		if len(g.Metrics) != len(w.Metrics) {
			return false
		}
		for j := range g.Metrics {
			if g.Metrics[j].Name != w.Metrics[j].Name || math.Float64bits(g.Metrics[j].Value) != math.Float64bits(w.Metrics[j].Value) {
				return false
			}
		}
		if g.Iteration != w.Iteration || g.Samples != w.Samples || g.Digest != w.Digest {
			return false
		}
	}
	got.Iter, got.Iters, want.Iter, want.Iters = nil, nil, nil, nil
	return reflect.DeepEqual(got, want)
}

func checkEvents(t *testing.T, got, want []Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
	for i := range got {
		if !sameEvent(got[i], want[i]) {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// writeAttempt writes evs with an AttemptWriter and returns the file.
func writeAttempt(t *testing.T, path string, h AttemptHeader, evs []Event) []byte {
	t.Helper()
	w, err := CreateAttempt(path, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if err := w.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// buildFrames is a file of the given payloads, framed and chained, without
// any check of what they hold.
func buildFrames(payloads ...[]byte) []byte {
	b, prev := []byte(attemptMagic), xxhash.Sum64String(attemptMagic)
	for _, p := range payloads {
		b, prev = appendFrame(b, prev, p)
	}
	return b
}

// buildAttempt is the file of h and evs (with the end frame if end).
func buildAttempt(h AttemptHeader, evs []Event, end bool) []byte {
	payloads := [][]byte{headerPayload(h)}
	for i := range evs {
		payloads = append(payloads, appendEvent(nil, &evs[i]))
	}
	if end {
		payloads = append(payloads, binary.AppendUvarint([]byte{kindEnd}, uint64(len(evs))))
	}
	return buildFrames(payloads...)
}

type frameSpan struct{ start, body, end int } // length prefix at start, payload at body

// frameSpans splits a well-formed file into its frames.
func frameSpans(b []byte) []frameSpan {
	var out []frameSpan
	for off := len(attemptMagic); off < len(b); {
		l, n := binary.Uvarint(b[off:])
		out = append(out, frameSpan{off, off + n, off + n + int(l) + 8})
		off = out[len(out)-1].end
	}
	return out
}

func readBytes(t *testing.T, b []byte) (*Attempt, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "attempt")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return ReadAttempt(path)
}

func wantCorrupt(t *testing.T, b []byte, what string) error {
	t.Helper()
	a, err := readBytes(t, b)
	if !errors.Is(err, ErrCorruptAttempt) {
		t.Fatalf("%s: got %+v, %v; want ErrCorruptAttempt", what, a, err)
	}
	return err
}

func TestAttemptRoundTrip(t *testing.T) {
	evs := attemptEvents(testHeader.Task)
	path := filepath.Join(t.TempDir(), "attempt")
	file := writeAttempt(t, path, testHeader, evs)
	a, err := ReadAttempt(path)
	if err != nil {
		t.Fatal(err)
	}
	if a.Header != testHeader || !a.Complete {
		t.Fatalf("header %+v complete %v, want %+v and true", a.Header, a.Complete, testHeader)
	}
	checkEvents(t, a.Events, evs)
	if got := string(a.Events[2].Data); got != string(evs[2].Data) {
		t.Fatalf("data %q, want it byte for byte: %q", got, evs[2].Data)
	}
	if !bytes.Equal(file, buildAttempt(testHeader, a.Events, true)) {
		t.Fatal("the events read back do not re-encode to the file")
	}
	if !strings.HasPrefix(string(file), "zorepro-attempt 1\n") {
		t.Fatalf("file starts %q", file[:20])
	}
}

// A writer that never closes (it was killed) leaves a readable prefix.
func TestAttemptWithoutClose(t *testing.T) {
	evs := attemptEvents(testHeader.Task)
	path := filepath.Join(t.TempDir(), "attempt")
	w, err := CreateAttempt(path, testHeader)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	a, err := ReadAttempt(path)
	if err != nil || a.Complete || len(a.Events) != 0 || a.Header != testHeader {
		t.Fatalf("after create: %+v, %v", a, err)
	}
	for _, ev := range evs {
		if err := w.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	a, err = ReadAttempt(path)
	if err != nil || a.Complete {
		t.Fatalf("before close: %+v, %v", a, err)
	}
	checkEvents(t, a.Events, evs)
}

func TestAttemptCutAtEveryOffset(t *testing.T) {
	evs := attemptEvents(testHeader.Task)
	file := writeAttempt(t, filepath.Join(t.TempDir(), "attempt"), testHeader, evs)
	spans := frameSpans(file)
	if len(spans) != len(evs)+2 {
		t.Fatalf("%d frames, want header, %d events and end", len(spans), len(evs))
	}
	path := filepath.Join(t.TempDir(), "cut")
	for cut := 0; cut < len(file); cut++ {
		if err := os.WriteFile(path, file[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := ReadAttempt(path)
		if cut < spans[0].end {
			if !errors.Is(err, ErrCorruptAttempt) {
				t.Fatalf("cut at %d inside the header: %+v, %v; want ErrCorruptAttempt", cut, a, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		whole := 0
		for _, s := range spans[1 : len(spans)-1] {
			if s.end <= cut {
				whole++
			}
		}
		if a.Complete || a.Header != testHeader {
			t.Fatalf("cut at %d: complete %v, header %+v", cut, a.Complete, a.Header)
		}
		checkEvents(t, a.Events, evs[:whole])
	}
}

// Every single flipped bit is damage, except in the last frame (a torn
// tail) and in a length prefix that then points past the end.
func TestAttemptFlippedByte(t *testing.T) {
	evs := attemptEvents(testHeader.Task)
	file := writeAttempt(t, filepath.Join(t.TempDir(), "attempt"), testHeader, evs)
	spans := frameSpans(file)
	endFrame := spans[len(spans)-1]
	path := filepath.Join(t.TempDir(), "flipped")
	for off := range file {
		for _, mask := range []byte{0x01, 0x80} {
			b := bytes.Clone(file)
			b[off] ^= mask
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			a, err := ReadAttempt(path)
			if off >= endFrame.start {
				if err != nil || a.Complete || len(a.Events) != len(evs) {
					t.Fatalf("flip %#x at %d in the end frame: %+v, %v; want every event, incomplete", mask, off, a, err)
				}
				continue
			}
			k := -1 // the frame holding off
			for i, s := range spans {
				if s.start <= off && off < s.end {
					k = i
				}
			}
			if k > 0 && off < spans[k].body && err == nil {
				if a.Complete || len(a.Events) != k-1 {
					t.Fatalf("flip %#x in the length of frame %d: %d events, complete %v", mask, k, len(a.Events), a.Complete)
				}
				continue
			}
			if !errors.Is(err, ErrCorruptAttempt) {
				t.Fatalf("flip %#x at %d: %+v, %v; want ErrCorruptAttempt", mask, off, a, err)
			}
			if k >= 0 && !strings.Contains(err.Error(), fmt.Sprintf("offset %d:", spans[k].start)) {
				t.Fatalf("flip at %d: %v does not name the frame at offset %d", off, err, spans[k].start)
			}
		}
	}
}

func TestAttemptFramesMovedOrSpliced(t *testing.T) {
	evs := attemptEvents(testHeader.Task)
	dir := t.TempDir()
	file := writeAttempt(t, filepath.Join(dir, "a"), testHeader, evs)
	spans := frameSpans(file)
	frame := func(b []byte, s frameSpan) []byte { return b[s.start:s.end] }
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

	swapped := join(file[:spans[2].start], frame(file, spans[3]), frame(file, spans[2]), file[spans[3].end:])
	wantCorrupt(t, swapped, "frames 2 and 3 swapped")
	dropped := join(file[:spans[2].start], file[spans[2].end:])
	wantCorrupt(t, dropped, "frame 2 dropped")

	// Another attempt of the same header, whose second event differs.
	other := attemptEvents(testHeader.Task)
	other[1].Transcript = "kind train\nseed 6\n"
	otherFile := writeAttempt(t, filepath.Join(dir, "b"), testHeader, other)
	otherSpans := frameSpans(otherFile)
	spliced := join(file[:spans[2].start], frame(otherFile, otherSpans[2]), file[spans[2].end:])
	err := wantCorrupt(t, spliced, "frame 2 spliced from another file")
	if !strings.Contains(err.Error(), fmt.Sprintf("offset %d:", spans[2].start+len(frame(otherFile, otherSpans[2])))) {
		t.Fatalf("%v: want the frame after the spliced one named", err)
	}
	spliced = join(file[:spans[4].start], frame(otherFile, otherSpans[4]), file[spans[4].end:])
	wantCorrupt(t, spliced, "frame 4 spliced from another file")
}

func TestAttemptAfterEnd(t *testing.T) {
	evs := attemptEvents(testHeader.Task)
	file := writeAttempt(t, filepath.Join(t.TempDir(), "attempt"), testHeader, evs)
	wantCorrupt(t, append(bytes.Clone(file), 0), "a byte after the end frame")
	// A whole, correctly chained event frame after the end frame.
	payloads := [][]byte{headerPayload(testHeader)}
	for i := range evs {
		payloads = append(payloads, appendEvent(nil, &evs[i]))
	}
	payloads = append(payloads, binary.AppendUvarint([]byte{kindEnd}, uint64(len(evs))), appendEvent(nil, &evs[0]))
	err := wantCorrupt(t, buildFrames(payloads...), "an event after the end frame")
	if !strings.Contains(err.Error(), "after the end frame") {
		t.Fatal(err)
	}
	payloads[len(payloads)-2] = binary.AppendUvarint([]byte{kindEnd}, uint64(len(evs)-1))
	wantCorrupt(t, buildFrames(payloads[:len(payloads)-1]...), "an end frame one short")
	if !bytes.Equal(buildAttempt(testHeader, evs, true), file) {
		t.Fatal("buildAttempt differs from what the writer wrote")
	}
}

// Frames with good digests but bad contents.
func TestAttemptBadFrames(t *testing.T) {
	h := headerPayload(testHeader)
	ok := appendEvent(nil, &Event{Type: TypeNote, Task: testHeader.Task})
	invalid := appendEvent(nil, &Event{Type: TypeIter, Task: testHeader.Task}) // no Iter
	otherTask := appendEvent(nil, &Event{Type: TypeNote, Task: "other"})
	nonCanonical := append(bytes.Clone(ok), 0)
	for name, b := range map[string][]byte{
		"no magic":                     buildFrames(h, ok)[1:],
		"magic only":                   []byte(attemptMagic),
		"event before header":          buildFrames(ok, h),
		"two headers":                  buildFrames(h, h),
		"header of another task":       buildAttempt(AttemptHeader{Task: "other", Attempt: "x"}, []Event{{Type: TypeNote, Task: testHeader.Task}}, true),
		"header without attempt":       buildFrames([]byte(`H{"task":"a","action":"","attempt":""}`)),
		"header with an unknown field": buildFrames([]byte(`H{"task":"a","action":"","attempt":"x","more":1}`)),
		"header not JSON":              buildFrames([]byte(`H{`)),
		"event of another task":        buildFrames(h, ok, otherTask),
		"invalid event":                buildFrames(h, invalid),
		"event not decoding":           buildFrames(h, ok[:len(ok)-3]),
		"event with extra bytes":       buildFrames(h, nonCanonical),
		"empty frame":                  buildFrames(h, nil),
		"unknown kind":                 buildFrames(h, []byte("X")),
		"bad end frame":                buildFrames(h, ok, []byte{kindEnd}),
		"overlong frame length":        append([]byte(attemptMagic), bytes.Repeat([]byte{0xff}, 11)...),
	} {
		wantCorrupt(t, b, name)
	}
}

func TestAttemptWriterRejects(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "attempt")
	w, err := CreateAttempt(path, testHeader)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(Event{Type: TypeNote, Task: "another/task"}); !errors.Is(err, ErrInvalidEvent) {
		t.Fatalf("event of another task: %v, want ErrInvalidEvent", err)
	}
	if err := w.Append(Event{Type: TypeIter, Task: testHeader.Task}); !errors.Is(err, ErrInvalidEvent) {
		t.Fatalf("iter event without Iter: %v, want ErrInvalidEvent", err)
	}
	if err := w.Append(Event{Type: "bogus", Task: testHeader.Task}); !errors.Is(err, ErrInvalidEvent) {
		t.Fatalf("unknown type: %v, want ErrInvalidEvent", err)
	}
	if err := w.Append(Event{Type: TypeNote, Task: testHeader.Task, Data: json.RawMessage("{")}); !errors.Is(err, ErrInvalidEvent) {
		t.Fatalf("bad data: %v, want ErrInvalidEvent", err)
	}
	if err := w.Append(Event{Type: TypeNote, Task: testHeader.Task}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"Append": w.Append(Event{Type: TypeNote, Task: testHeader.Task}),
		"Sync":   w.Sync(),
		"Close":  w.Close(),
	} {
		if !errors.Is(err, fs.ErrClosed) {
			t.Fatalf("%s after Close: %v, want fs.ErrClosed", name, err)
		}
	}
	a, err := ReadAttempt(path)
	if err != nil || !a.Complete || len(a.Events) != 1 {
		t.Fatalf("%+v, %v; want the one event, complete", a, err)
	}

	before, _ := os.ReadFile(path)
	if _, err := CreateAttempt(path, testHeader); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("CreateAttempt on an existing file: %v, want fs.ErrExist", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("CreateAttempt changed an existing file")
	}
	for _, h := range []AttemptHeader{{Attempt: "x"}, {Task: "a"}, {Task: "a\xff", Attempt: "x"}} {
		p := filepath.Join(dir, "bad-header")
		if _, err := CreateAttempt(p, h); err == nil {
			t.Fatalf("CreateAttempt accepted header %+v", h)
		}
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("header %+v: file left behind (%v)", h, err)
		}
	}
	if _, err := ReadAttempt(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v, want fs.ErrNotExist", err)
	}
}

func TestAttemptConcurrentAppends(t *testing.T) {
	const goroutines, each = 8, 200
	path := filepath.Join(t.TempDir(), "attempt")
	w, err := CreateAttempt(path, testHeader)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				ev := Event{Type: TypeIter, Run: uint64(g), Task: testHeader.Task, Iter: &task.Iter{Iteration: int64(i), Samples: int64(g)}}
				if err := w.Append(ev); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := ReadAttempt(path)
	if err != nil || !a.Complete || len(a.Events) != goroutines*each {
		t.Fatalf("%v, complete %v, %d events; want %d", err, a != nil && a.Complete, len(a.Events), goroutines*each)
	}
	next := make([]int64, goroutines) // each goroutine's events arrive in its order
	for _, ev := range a.Events {
		if ev.Iter.Iteration != next[ev.Run] || ev.Iter.Samples != int64(ev.Run) {
			t.Fatalf("goroutine %d: iteration %d, want %d", ev.Run, ev.Iter.Iteration, next[ev.Run])
		}
		next[ev.Run]++
	}
}

// redigest recomputes the chain of a file's whole frames, so that the
// fuzzer reaches the payload decoders.
func redigest(b []byte) []byte {
	if !bytes.HasPrefix(b, []byte(attemptMagic)) {
		return b
	}
	out, prev := []byte(attemptMagic), xxhash.Sum64String(attemptMagic)
	off := len(attemptMagic)
	for off < len(b) {
		l, n := binary.Uvarint(b[off:])
		if n <= 0 || l > uint64(len(b)-off-n) || uint64(len(b)-off-n)-l < 8 {
			break
		}
		out, prev = appendFrame(out, prev, b[off+n:off+n+int(l)])
		off += n + int(l) + 8
	}
	return append(out, b[off:]...)
}

func FuzzReadAttempt(f *testing.F) {
	evs := attemptEvents(testHeader.Task)
	good := buildAttempt(testHeader, evs, true)
	f.Add(good)
	f.Add(good[:len(good)-5])
	f.Add(buildAttempt(testHeader, evs[:3], false))
	f.Add(buildFrames(headerPayload(testHeader), []byte{kindEvent, 1, 2}))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, b := range [][]byte{data, redigest(data)} {
			a, err := parseAttempt("fuzz", b)
			if err != nil {
				if !errors.Is(err, ErrCorruptAttempt) {
					t.Fatalf("error %v does not wrap ErrCorruptAttempt", err)
				}
				continue
			}
			for i := range a.Events {
				if err := validate(&a.Events[i]); err != nil || a.Events[i].Task != a.Header.Task {
					t.Fatalf("event %d: %+v (%v)", i, a.Events[i], err)
				}
			}
			enc := buildAttempt(a.Header, a.Events, a.Complete)
			if a.Complete && !bytes.Equal(enc, b) {
				t.Fatalf("complete attempt re-encodes differently:\n got %q\nfile %q", enc, b)
			}
			if !a.Complete && !bytes.HasPrefix(b, enc) {
				t.Fatalf("incomplete attempt does not re-encode to a prefix:\n got %q\nfile %q", enc, b)
			}
		}
	})
}
