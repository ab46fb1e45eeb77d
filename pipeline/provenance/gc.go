package provenance

import (
	"fmt"
	"slices"

	"zorepro/pipeline"
	"zorepro/pipeline/events"
	"zorepro/pipeline/store"
)

// GCOptions configure GC.
type GCOptions struct {
	// DryRun reports what would be removed and removes nothing.
	DryRun bool
	// Checkpoints also removes the checkpoints of actions that finished:
	// a finished task is never resumed, and replay starts from scratch.
	// Checkpoints of unfinished actions are always kept (a rerun resumes
	// from them).
	Checkpoints bool
}

// GCReport says what a collection found and removed.
type GCReport struct {
	Entries        int      `json:"entries"`    // entries in the store before
	Referenced     int      `json:"referenced"` // entries some recorded run references
	Removed        int      `json:"removed"`
	RemovedBytes   int64    `json:"removed_bytes"`
	Checkpoints    int      `json:"checkpoints_removed"` // of Removed: checkpoints of finished actions
	Leftovers      int      `json:"leftovers_removed"`   // temp and quarantined files
	LeftoverBytes  int64    `json:"leftover_bytes"`
	Unreadable     []string `json:"unreadable_manifests,omitempty"`
	DryRun         bool     `json:"dry_run,omitempty"`
	RemovedEntries []string `json:"removed_entries,omitempty"`
}

// GC removes every store pipeline.OutputEntry that no recorded run references: the
// output manifests of "done" and "cached" states, the entries they list,
// and checkpoints (see GCOptions.Checkpoints). Temp files and quarantined
// entries are removed too. The caller must hold the event log for writing,
// so that no run adds references meanwhile (the CLI opens it read-write).
func (r *Record) GC(opt GCOptions) (*GCReport, error) {
	manifests := map[string]bool{}
	finished := map[string]bool{}
	ckpts := map[string][]string{} // checkpoint content -> actions
	err := r.eng.Events.Scan(func(ev events.Event) error {
		switch {
		case ev.Type == events.TypeState && (ev.State == events.StateDone || ev.State == events.StateCached) && ev.Output != "":
			manifests[ev.Output] = true
			if ev.State == events.StateDone {
				finished[ev.Action] = true
			}
		case ev.Type == events.TypeCheckpoint && ev.Checkpoint != nil:
			ckpts[ev.Checkpoint.Content] = append(ckpts[ev.Checkpoint.Content], ev.Action)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("gc: read %s: %w", r.eng.Events.Path(), err)
	}
	rep := &GCReport{DryRun: opt.DryRun}
	keep := map[store.ID]bool{}
	for _, m := range sortedKeys(manifests) {
		id, err := store.ParseID(m)
		if err != nil {
			rep.Unreadable = append(rep.Unreadable, m)
			continue
		}
		keep[id] = true
		es, err := r.readManifest(id)
		if err != nil {
			// A lost manifest is a cache miss: its task recomputes, and
			// the entries it listed come back with the same IDs.
			rep.Unreadable = append(rep.Unreadable, m)
			continue
		}
		for _, en := range es {
			keep[en.ID] = true
		}
	}
	dropCkpt := map[store.ID]bool{}
	for _, c := range sortedKeys(ckpts) {
		id, err := store.ParseID(c)
		if err != nil {
			continue
		}
		done := opt.Checkpoints
		for _, act := range ckpts[c] {
			done = done && finished[act]
		}
		if done && !keep[id] {
			dropCkpt[id] = true
		} else {
			keep[id] = true
		}
	}
	var remove []store.ID
	var sizes []int64
	err = r.eng.Store.Walk(func(id store.ID, size int64) error {
		rep.Entries++
		if keep[id] {
			rep.Referenced++
			return nil
		}
		remove = append(remove, id)
		sizes = append(sizes, size)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	for i, id := range remove {
		if !opt.DryRun {
			if err := r.eng.Store.Remove(id); err != nil {
				return rep, fmt.Errorf("gc: %w", err)
			}
		}
		rep.Removed++
		rep.RemovedBytes += sizes[i]
		rep.RemovedEntries = append(rep.RemovedEntries, id.String())
		if dropCkpt[id] {
			rep.Checkpoints++
		}
	}
	left, err := r.eng.Store.Leftovers()
	if err != nil {
		return rep, fmt.Errorf("gc: %w", err)
	}
	for _, l := range left {
		if !opt.DryRun {
			if err := r.eng.Store.RemoveLeftover(l); err != nil {
				return rep, fmt.Errorf("gc: %w", err)
			}
		}
		rep.Leftovers++
		rep.LeftoverBytes += l.Size
	}
	return rep, nil
}

// readManifest reads and decodes an output manifest.
func (r *Record) readManifest(id store.ID) ([]pipeline.OutputEntry, error) {
	data, err := r.eng.Store.Get(id)
	if err != nil {
		return nil, err
	}
	return pipeline.DecodeOutputs(data)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
