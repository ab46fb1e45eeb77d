package pipeline

import (
	"encoding/hex"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/cespare/xxhash/v2"

	"zorepro/pipeline/codeid"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/task"
)

// ActionID identifies a task's inputs; it is distinct from a content ID.
type ActionID [8]byte

// String returns "xxh64-<hex>".
func (a ActionID) String() string { return "xxh64-" + hex.EncodeToString(a[:]) }

// CodeIdentity computes the code identity of a set of root packages and
// describes the build (tags, GOAMD64, CGO_ENABLED, ...).
type CodeIdentity interface {
	Closure(roots ...string) (codeid.Identity, error)
	BuildLines() []string
}

// Platform lines enter every transcript.
type Platform struct {
	GoVersion, GOARCH string
}

// HostInfo names a machine in messages: its host name and its CPU model
// (never part of an identity: what a CPU changes in a result is named by
// the native libraries' versions, e.g. OpenBLAS's kernel core).
type HostInfo struct {
	Name, CPU string
}

// Host describes this machine.
func Host() HostInfo {
	h := HostInfo{CPU: runtime.GOARCH}
	h.Name, _ = os.Hostname()
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				h.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	return h
}

func (h HostInfo) String() string { return fmt.Sprintf("%s (%s)", h.Name, h.CPU) }

// HostPlatform describes the running binary.
func HostPlatform() Platform { return Platform{GoVersion: runtime.Version(), GOARCH: runtime.GOARCH} }

// pkgOf returns the import path of the package defining v's type.
func pkgOf(v any) string {
	t := reflect.TypeOf(v)
	for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map) {
		t = t.Elem()
	}
	if t == nil {
		return ""
	}
	return t.PkgPath()
}

// Roots returns the root packages of a task's code identity: the kind's
// package and each component's.
func Roots(t *dag.Task) []string {
	set := map[string]bool{pkgOf(t.Kind): true}
	if t.Runner != nil {
		for _, c := range t.Runner.Components() {
			if p := pkgOf(c); p != "" {
				set[p] = true
			}
		}
	}
	delete(set, "")
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Transcript builds a task's identity transcript. outputs maps upstream task
// paths to their output IDs; a missing entry is written as "?" (unknown:
// the upstream has yet to run), which callers must not hash as final.
func Transcript(t *dag.Task, code CodeIdentity, plat Platform, outputs map[string]string) ([]string, error) {
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	add("kind %s", t.Kind.Name())
	add("kind-version %d", t.Kind.Version())
	add("path %s", t.Path)
	if t.HasSeed {
		add("seed %d", t.Seed)
	}
	if t.Parent != nil {
		add("streams-of %s", t.Parent.Path) // a part draws from its parent's streams
	}
	for _, p := range t.Params.Resolved() {
		add("param %s", p)
	}
	for _, slot := range sortedSlots(t) {
		for _, up := range t.Inputs[slot] {
			id, ok := outputs[up.Path]
			if !ok {
				id = "?"
			}
			add("input %s %s %s", slot, up.Path, id)
		}
	}
	ident, err := code.Closure(Roots(t)...)
	if err != nil {
		return nil, fmt.Errorf("code identity of %s: %w", t.Path, err)
	}
	add("code %s", ident.ID)
	for _, l := range ident.Lines {
		add("code-%s", l)
	}
	for _, l := range code.BuildLines() {
		add("build %s", l)
	}
	add("go %s", plat.GoVersion)
	add("goarch %s", plat.GOARCH)
	if t.Runner != nil {
		for _, c := range t.Runner.Components() {
			if n, ok := c.(task.Native); ok {
				for _, v := range n.NativeVersions() {
					add("native %s", v)
				}
			}
		}
		if n, ok := any(t.Kind).(task.Native); ok {
			for _, v := range n.NativeVersions() {
				add("native %s", v)
			}
		}
	}
	sort.Strings(lines)
	return slices.Compact(lines), nil
}

func sortedSlots(t *dag.Task) []string {
	out := make([]string, 0, len(t.Inputs))
	for k := range t.Inputs {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Action hashes a transcript.
func Action(lines []string) ActionID {
	var a ActionID
	sum := xxhash.Sum64String(strings.Join(lines, "\n") + "\n")
	for i := 0; i < 8; i++ {
		a[i] = byte(sum >> (56 - 8*i))
	}
	return a
}

// DiffTranscripts returns "-old" and "+new" lines, sorted, for "why".
func DiffTranscripts(old, cur []string) []string {
	o := map[string]bool{}
	for _, l := range old {
		o[l] = true
	}
	c := map[string]bool{}
	for _, l := range cur {
		c[l] = true
	}
	var out []string
	for _, l := range old {
		if !c[l] {
			out = append(out, "- "+l)
		}
	}
	for _, l := range cur {
		if !o[l] {
			out = append(out, "+ "+l)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i][2:] < out[j][2:] })
	return out
}
