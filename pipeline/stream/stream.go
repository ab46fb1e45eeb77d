package stream

import (
	"math/rand/v2"
	"sort"
	"strconv"
	"sync"

	"github.com/cespare/xxhash/v2"
)

// Version prefixes the canonical text hashed by Derive.
const Version = "zorepro/stream/v1"

// Source hands out named streams under one root seed and scope.
type Source struct {
	root  uint64
	scope string
	log   *Log
}

// New returns a Source for the given root seed and scope. log may be nil.
func New(root uint64, scope string, log *Log) Source {
	return Source{root: root, scope: scope, log: log}
}

// Root returns the root seed.
func (s Source) Root() uint64 { return s.root }

// Scope returns the scope (usually the task path).
func (s Source) Scope() string { return s.scope }

// Sub returns a Source for a sub-unit with its own root seed, e.g. one
// tuning trial: its scope is s.Scope()+"/"+scope.
func (s Source) Sub(scope string, root uint64) Source {
	return Source{root: root, scope: s.scope + "/" + scope, log: s.log}
}

// PCG returns the generator of stream name[idx...].
func (s Source) PCG(name string, idx ...uint64) *rand.PCG {
	if s.log != nil {
		s.log.note(s.root, s.scope, name, len(idx))
	}
	hi, lo := Derive(s.root, s.scope, name, idx...)
	return rand.NewPCG(hi, lo)
}

// Rand returns a *rand.Rand over stream name[idx...]. Calling it twice with
// the same arguments yields two generators producing the same sequence.
func (s Source) Rand(name string, idx ...uint64) *rand.Rand {
	return rand.New(s.PCG(name, idx...))
}

// Canonical returns the text whose digests seed stream name[idx...]:
// "zorepro/stream/v1\x00<root>\x00<scope>\x00<name>\x00<i,j,...>".
func Canonical(root uint64, scope, name string, idx ...uint64) string {
	return string(appendCanonical(nil, root, scope, name, idx))
}

func appendCanonical(b []byte, root uint64, scope, name string, idx []uint64) []byte {
	b = append(b, Version...)
	b = append(b, 0)
	b = strconv.AppendUint(b, root, 10)
	b = append(b, 0)
	b = append(b, scope...)
	b = append(b, 0)
	b = append(b, name...)
	b = append(b, 0)
	for i, v := range idx {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, v, 10)
	}
	return b
}

// Derive returns the PCG seeds of a stream: hi = xxh64(c+"\x00hi"),
// lo = xxh64(c+"\x00lo") where c = Canonical(root, scope, name, idx...).
// It is on the hot path of every iteration (a stream per direction or
// episode), so it builds c in a stack buffer when it fits and hashes it
// without copies.
func Derive(root uint64, scope, name string, idx ...uint64) (hi, lo uint64) {
	var arr [256]byte
	b := append(appendCanonical(arr[:0], root, scope, name, idx), 0, 'h', 'i')
	hi = xxhash.Sum64(b)
	b[len(b)-2], b[len(b)-1] = 'l', 'o'
	return hi, xxhash.Sum64(b)
}

// Derivation is the human-readable rule Derive implements, recorded in the
// event log beside each stream family.
const Derivation = `pcg(xxh64(C+"\x00hi"), xxh64(C+"\x00lo")), C = "zorepro/stream/v1\x00<root>\x00<scope>\x00<name>\x00<indices joined by ,>"`

// Family is one named stream family a task used: all streams with this root,
// scope and name, indexed by Arity indices.
type Family struct {
	Root  uint64 `json:"root"`
	Scope string `json:"scope"`
	Name  string `json:"name"`
	Arity int    `json:"arity"`
}

// Log records the stream families drawn from the Sources that share it.
type Log struct {
	mu   sync.Mutex
	seen map[Family]bool
	// recent holds the first families seen, scanned before the map: a task
	// uses a handful, drawn from once per iteration or more, and comparing
	// a few fields (the strings are usually the same ones) is cheaper
	// than hashing the scope.
	recent []Family
}

// recentMax bounds Log.recent.
const recentMax = 16

func (l *Log) note(root uint64, scope, name string, arity int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.recent {
		if f.Root == root && f.Arity == arity && f.Name == name && f.Scope == scope {
			return
		}
	}
	f := Family{Root: root, Scope: scope, Name: name, Arity: arity}
	if l.seen == nil {
		l.seen = make(map[Family]bool)
	}
	if !l.seen[f] && len(l.recent) < recentMax {
		l.recent = append(l.recent, f)
	}
	l.seen[f] = true
}

// Families returns the recorded families sorted by scope, name, root, arity.
func (l *Log) Families() []Family {
	l.mu.Lock()
	out := make([]Family, 0, len(l.seen))
	for f := range l.seen {
		out = append(out, f)
	}
	l.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Scope != b.Scope {
			return a.Scope < b.Scope
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Root != b.Root {
			return a.Root < b.Root
		}
		return a.Arity < b.Arity
	})
	return out
}
