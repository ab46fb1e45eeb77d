package bundle

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/events"
	"zorepro/pipeline/store"
)

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

// Import checks the bundle at path and merges it into the store and event
// log of the engine open returns, given the bundle's manifest (see the
// package documentation). Its Plan is the importing plan: a task is
// imported only when this plan, this binary's code and the bundle's
// upstream outputs give it the bundle's action. info is the start event's
// data of the run that records the imported tasks; Import adds the
// engine's profile to it. When ctx is cancelled Import stops within a
// member with ctx's error, having recorded nothing (entries it stored are
// complete, and the same import later finds them).
func Import(ctx context.Context, path string, open func(*Manifest) (*pipeline.Engine, error), info map[string]any) (*ImportSummary, error) {
	c, err := Read(ctx, path)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	m := &c.Manifest
	eng, err := open(m)
	if err != nil {
		return nil, err
	}
	sum := &ImportSummary{File: path, Code: m.Code, Profile: m.Profile, Imported: []string{}, Present: []string{}, Other: []string{}, Unplanned: []string{}}
	outputs := map[string]string{}
	for _, te := range m.Tasks {
		outputs[te.Task] = te.Output
	}
	var todo []TaskEntry
	var diverged []string
	for _, te := range m.Tasks {
		t := eng.Plan.Task(te.Task)
		if t == nil {
			sum.Unplanned = append(sum.Unplanned, te.Task)
			continue
		}
		lines, err := pipeline.Transcript(t, eng.Code, eng.Platform, outputs)
		if err != nil {
			return nil, err
		}
		if pipeline.Action(lines).String() != te.Action {
			sum.Other = append(sum.Other, te.Task)
			continue
		}
		have, ok, err := eng.Events.Action(te.Action)
		switch {
		case err != nil:
			return nil, err
		case ok && have.Output != te.Output:
			diverged = append(diverged, fmt.Sprintf("%s (action %s: the bundle's output %s, this store's %s)", te.Task, te.Action, te.Output, have.Output))
		case ok && eng.VerifyOutput(have.Output) == nil:
			sum.Present = append(sum.Present, te.Task)
		default:
			todo = append(todo, te)
		}
	}
	if len(diverged) > 0 {
		return nil, fmt.Errorf("%w: nothing imported; %d task(s): %s", ErrDiverged, len(diverged), strings.Join(diverged, "; "))
	}
	if len(todo) == 0 {
		return sum, nil
	}
	want := map[string]bool{}
	for _, te := range todo {
		for _, id := range c.entries[te.Task] {
			want["cas/"+id] = true
		}
	}
	err = members(ctx, path, false, func(name string, _ int64, rd io.Reader) error {
		if !want[name] {
			return nil
		}
		id, err := store.ParseID(strings.TrimPrefix(name, "cas/"))
		if err != nil {
			return err
		}
		if _, err := eng.Store.PutReader(id, rd); err != nil {
			return fmt.Errorf("%w: entry %s changed since it was checked: %v", ErrBundle, name, err)
		}
		sum.Entries++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	run, err := RecordTasks(eng.Events, len(todo), func(yield func(*Record) error) error {
		for i := range todo {
			r, err := c.decode(&todo[i])
			if err != nil {
				return err
			}
			if err := yield(r); err != nil {
				return err
			}
		}
		return nil
	}, withProfile(info, eng.Opt.Profile))
	if err != nil {
		return nil, err
	}
	sum.Run = run
	for _, te := range todo {
		sum.Imported = append(sum.Imported, te.Task)
	}
	return sum, nil
}

// withProfile is info with "profile" set, as a run's start event has it,
// so that commands that default to the latest run's profile find it.
func withProfile(info map[string]any, profile string) json.RawMessage {
	out := map[string]any{"profile": profile}
	for k, v := range info {
		out[k] = v
	}
	b, _ := json.Marshal(out)
	return b
}

// RecordTasks records n tasks' records, as records yields them, as one
// run of their own, and returns the run.
func RecordTasks(log *events.Log, n int, records func(yield func(*Record) error) error, info json.RawMessage) (uint64, error) {
	run, err := log.BeginRun(info, time.Now().UnixNano())
	if err != nil {
		return 0, err
	}
	w := log.NewWriter(events.WriterOptions{})
	now := time.Now().UnixNano()
	err = records(func(r *Record) error {
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
		return w.Err()
	})
	if err != nil {
		w.Close()
		return 0, err
	}
	summary, _ := json.Marshal(map[string]int{"imported": n})
	w.Append(events.Event{Type: events.TypeRun, Run: run, State: events.RunFinished, Time: time.Now().UnixNano(), Data: summary})
	if err := w.Close(); err != nil {
		return 0, err
	}
	return run, nil
}
