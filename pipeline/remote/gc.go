package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// GCOptions says what GC keeps.
type GCOptions struct {
	// Keep are targets (stage names, task paths or /-bounded prefixes of
	// them): the index's actions of the tasks they name are kept, with
	// every upstream action whose output those read, and everything they
	// reach (action entries, records, store entries); everything else is
	// removed.
	Keep []string
	// Delete removes; otherwise GC only reports what it would remove.
	Delete bool
	// Grace spares objects written less than this long ago: a push in
	// progress writes its objects before the entries that name them.
	Grace time.Duration
	// Sign re-signs the index GC rewrites (without it, the rewrite drops
	// the index's signatures).
	Sign *Key
}

// GCReport is what GC removed (or would remove).
type GCReport struct {
	Remote      string `json:"remote"`
	Deleted     bool   `json:"deleted"`
	KeptTasks   int    `json:"kept_tasks"`
	KeptObjects int    `json:"kept_objects"`
	KeptBytes   int64  `json:"kept_bytes"`
	// Dropped are the index's actions that are not kept.
	Dropped int `json:"dropped_index_tasks"`
	// Actions, Objects and Bytes are what is removed; Young what the grace
	// period spares.
	Actions  int   `json:"actions"`
	Objects  int   `json:"objects"`
	Bytes    int64 `json:"bytes"`
	Young    int   `json:"spared_young"`
	Unsigned bool  `json:"index_signatures_dropped,omitempty"`
}

// GC removes from b what no kept task reaches: a dry run unless o.Delete.
// It refuses when the kept tasks match nothing in the index (a mistyped
// target would otherwise delete everything). The index is rewritten
// first, then the action entries and objects are removed, so that a reader
// never finds the index naming something that is gone.
func GC(ctx context.Context, b Backend, o GCOptions) (*GCReport, error) {
	data, _, err := b.Load(ctx, indexKey)
	if err != nil {
		return nil, fmt.Errorf("remote %s: no index to keep anything by: %w", b, err)
	}
	x, err := decodeIndex(data, b.String())
	if err != nil {
		return nil, err
	}
	rep := &GCReport{Remote: b.String(), Deleted: o.Delete}
	kept, err := keptActions(ctx, b, x, o.Keep)
	if err != nil {
		return nil, err
	}
	keepKeys := map[string]bool{indexKey: true}
	for _, t := range x.Tasks {
		ae, ok := kept[t.Action]
		if !ok {
			rep.Dropped++
			continue
		}
		rep.KeptTasks++
		keepKeys[ActionKey(t.Action)] = true
		for _, o := range append([]Object{ae.Record}, entryObjects(ae.Entries)...) {
			if k := ObjectKey(o.SHA256); !keepKeys[k] {
				keepKeys[k] = true
				rep.KeptObjects++
				rep.KeptBytes += o.Bytes
			}
		}
	}
	if rep.KeptTasks == 0 {
		return nil, fmt.Errorf("remote %s: the kept targets match none of the index's %d tasks: refusing to remove everything (check --keep and --profile)", b, len(x.Tasks))
	}
	var doomed []string
	now := time.Now()
	for _, prefix := range []string{"actions/", "objects/"} {
		err := b.List(ctx, prefix, func(key string, size int64, modified time.Time) error {
			switch {
			case keepKeys[key]:
			case now.Sub(modified) < o.Grace:
				rep.Young++
			default:
				doomed = append(doomed, key)
				if strings.HasPrefix(key, "actions/") {
					rep.Actions++
				} else {
					rep.Objects++
				}
				rep.Bytes += size
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if !o.Delete {
		return rep, nil
	}
	if err := rewriteIndex(ctx, b, kept, o.Sign, rep); err != nil {
		return nil, err
	}
	for _, key := range doomed {
		if err := b.Delete(ctx, key); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// rewriteIndex drops the index's tasks that are not kept, by
// compare-and-swap.
func rewriteIndex(ctx context.Context, b Backend, kept map[string]*ActionEntry, k *Key, rep *GCReport) error {
	for try := 0; ; try++ {
		data, ver, err := b.Load(ctx, indexKey)
		if err != nil {
			return err
		}
		x, err := decodeIndex(data, b.String())
		if err != nil {
			return err
		}
		var keep []IndexTask
		for _, t := range x.Tasks {
			if kept[t.Action] != nil {
				keep = append(keep, t)
			}
		}
		x.Tasks = keep
		signed := len(x.Signatures) > 0
		if k != nil {
			x.sign(k)
		} else {
			x.prune()
		}
		rep.Unsigned = signed && len(x.Signatures) == 0
		err = b.Swap(ctx, indexKey, x.encode(), ver)
		if err == nil || !errors.Is(err, ErrConflict) || try >= 100 {
			return err
		}
	}
}

func entryObjects(es []Entry) []Object {
	out := make([]Object, len(es))
	for i, e := range es {
		out[i] = e.Object
	}
	return out
}

// keptActions reads the action entries of the index's tasks the targets
// name and, through their inputs, of every upstream task they read.
func keptActions(ctx context.Context, b Backend, x *Index, targets []string) (map[string]*ActionEntry, error) {
	byOutput := map[[2]string][]IndexTask{}
	var todo []IndexTask
	for _, t := range x.Tasks {
		byOutput[[2]string{t.Task, t.Output}] = append(byOutput[[2]string{t.Task, t.Output}], t)
		for _, target := range targets {
			target = strings.TrimSuffix(target, "/")
			if t.Task == target || strings.HasPrefix(t.Task, target+"/") {
				todo = append(todo, t)
				break
			}
		}
	}
	kept := map[string]*ActionEntry{}
	for len(todo) > 0 {
		t := todo[0]
		todo = todo[1:]
		if kept[t.Action] != nil {
			continue
		}
		key := ActionKey(t.Action)
		data, _, err := b.Load(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("remote %s: the index lists %s: %w", b, key, err)
		}
		var ae ActionEntry
		if err := json.Unmarshal(data, &ae); err != nil || ae.Action != t.Action || sum256(data) != t.Entry {
			return nil, fmt.Errorf("%w: %s/%s is not the entry the index lists (%v)", ErrDamaged, b, key, err)
		}
		kept[t.Action] = &ae
		for _, in := range ae.Inputs {
			todo = append(todo, byOutput[[2]string{in.Task, in.Output}]...)
		}
	}
	return kept, nil
}
