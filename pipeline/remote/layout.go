package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Format is the version of the remote's layout (action entries and the
// index).
const Format = 1

// Limits on what a pull reads of a remote into memory: far above what
// a recorded task needs, so that a damaged or hostile remote is refused
// instead of filling memory.
const (
	MaxActionEntry = 16 << 20
	MaxRecord      = 64 << 20
)

// Keys of the layout.
const indexKey = "index.json"

// ObjectKey is where the object with SHA-256 sum (hex) lives.
func ObjectKey(sum string) string { return "objects/" + sum[:2] + "/" + sum }

// ActionKey is where the entry of an action lives.
func ActionKey(action string) string { return "actions/" + action + ".json" }

// Object is a content-addressed object: content stored gzip-compressed,
// named by the SHA-256 (hex) of the stored bytes, with their number and
// the content's (Size).
type Object struct {
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
	Size   int64  `json:"size"`
}

// Entry is a store entry held as an object: its content ID in a store.
type Entry struct {
	ID string `json:"id"`
	Object
}

// ActionEntry is what the remote holds of one recorded action: the task,
// its output, the upstream outputs it read (from its identity
// transcript), the record of its run (a bundle.Record, gob-encoded, as an
// object) and the store entries of its output (the output manifest first,
// then its files). It is written once, after every object it names.
type ActionEntry struct {
	Format  int     `json:"format"`
	Task    string  `json:"task"`
	Action  string  `json:"action"`
	Output  string  `json:"output"`
	Inputs  []Input `json:"inputs,omitempty"`
	Record  Object  `json:"record"`
	Entries []Entry `json:"entries"`
}

// Input is one upstream output a task read.
type Input struct {
	Task   string `json:"task"`
	Output string `json:"output"`
}

// encode is the entry's bytes: the same entry, the same bytes.
func (a *ActionEntry) encode() []byte {
	b, _ := json.Marshal(a)
	return append(b, '\n')
}

// IndexTask is one action the index lists.
type IndexTask struct {
	Task   string `json:"task"`
	Action string `json:"action"`
	Output string `json:"output"`
	// Entry is the action entry's object (its bytes at ActionKey).
	Entry Object `json:"entry"`
}

// Pushed is what the index says of one push.
type Pushed struct {
	Revision string   `json:"revision"`
	Code     string   `json:"code_identity"`
	Profile  string   `json:"profile"`
	Targets  []string `json:"targets"`
	Tasks    int      `json:"tasks"`
	At       string   `json:"at"` // RFC 3339, when it finished
}

// MaxPushes bounds how many pushes the index remembers (the latest).
const MaxPushes = 100

// Index lists every action pushed to the remote, with the SHA-256 of its
// entry, so that a reader holding a trusted signature of the index can
// check every byte it pulls; and the latest pushes. It is written last,
// by compare-and-swap, merging what concurrent pushers add.
type Index struct {
	Format     int         `json:"format"`
	Tasks      []IndexTask `json:"tasks"` // sorted by task, then action
	Pushes     []Pushed    `json:"pushes"`
	Signatures []Signature `json:"signatures,omitempty"`
}

// body is what a signature covers: the index without its signatures.
func (x *Index) body() []byte {
	c := *x
	c.Signatures = nil
	b, _ := json.Marshal(&c)
	return b
}

func (x *Index) encode() []byte {
	b, _ := json.Marshal(x)
	return append(b, '\n')
}

// decodeIndex reads an index, naming the remote in errors.
func decodeIndex(data []byte, where string) (*Index, error) {
	var x Index
	if err := json.Unmarshal(data, &x); err != nil || x.Format != Format {
		return nil, fmt.Errorf("%w: %s/%s is not an index of format %d (%v)", ErrDamaged, where, indexKey, Format, err)
	}
	return &x, nil
}

// merge adds tasks to the index (keeping its order) and the push. An
// action it lists with another output is returned as a divergence.
func (x *Index) merge(tasks []IndexTask, p *Pushed) (diverged []string) {
	have := map[string]IndexTask{}
	for _, t := range x.Tasks {
		have[t.Action] = t
	}
	for _, t := range tasks {
		old, ok := have[t.Action]
		switch {
		case !ok:
			x.Tasks = append(x.Tasks, t)
			have[t.Action] = t
		case old.Output != t.Output:
			diverged = append(diverged, fmt.Sprintf("%s (action %s: the remote's output %s, this store's %s)", t.Task, t.Action, old.Output, t.Output))
		}
	}
	slices.SortFunc(x.Tasks, func(a, b IndexTask) int {
		if c := strings.Compare(a.Task, b.Task); c != 0 {
			return c
		}
		return strings.Compare(a.Action, b.Action)
	})
	if p != nil {
		x.Pushes = append(x.Pushes, *p)
		if len(x.Pushes) > MaxPushes {
			x.Pushes = x.Pushes[len(x.Pushes)-MaxPushes:]
		}
	}
	return diverged
}

func sum256(b []byte) Object {
	h := sha256.Sum256(b)
	return Object{SHA256: hex.EncodeToString(h[:]), Bytes: int64(len(b)), Size: int64(len(b))}
}

// validSum reports whether s is a SHA-256 in hex (lowercase).
func validSum(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// Latest returns what b's index says of its latest push (false: there is
// no index, or it records no push).
func Latest(ctx context.Context, b Backend) (Pushed, bool, error) {
	data, _, err := b.Load(ctx, indexKey)
	if errors.Is(err, ErrNotFound) {
		return Pushed{}, false, nil
	}
	if err != nil {
		return Pushed{}, false, err
	}
	x, err := decodeIndex(data, b.String())
	if err != nil || len(x.Pushes) == 0 {
		return Pushed{}, false, err
	}
	return x.Pushes[len(x.Pushes)-1], true, nil
}
