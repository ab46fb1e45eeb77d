package pipeline

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"zorepro/pipeline/store"
)

// OutputEntry is one named output of a task, as its output manifest lists
// it.
type OutputEntry struct {
	Name string
	ID   store.ID
	Size int64
}

// validOutputName reports whether name fits a manifest line: non-empty
// and without white space.
func validOutputName(name string) bool {
	return name != "" && !strings.ContainsFunc(name, unicode.IsSpace)
}

// encodeOutputs is the canonical output manifest: "name id size" lines
// sorted by name. Its content ID is the task's output ID. Names must be
// valid (validOutputName) and distinct.
func encodeOutputs(es []OutputEntry) []byte {
	sort.Slice(es, func(i, j int) bool { return es[i].Name < es[j].Name })
	var b bytes.Buffer
	b.WriteString("zorepro-outputs v1\n")
	for _, e := range es {
		fmt.Fprintf(&b, "%s %s %d\n", e.Name, e.ID, e.Size)
	}
	return b.Bytes()
}

// DecodeOutputs decodes a manifest written by encodeOutputs. It accepts
// only that canonical form, so what it returns re-encodes to the same bytes
// (the same output ID); errors wrap ErrBadManifest. It never panics.
func DecodeOutputs(data []byte) ([]OutputEntry, error) {
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) == 0 || lines[0] != "zorepro-outputs v1" {
		return nil, fmt.Errorf("%w: no header line", ErrBadManifest)
	}
	var out []OutputEntry
	for i, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) != 3 {
			return nil, fmt.Errorf("%w: line %d: %q", ErrBadManifest, i+2, l)
		}
		id, err := store.ParseID(f[1])
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrBadManifest, i+2, err)
		}
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%w: line %d: bad size %q", ErrBadManifest, i+2, f[2])
		}
		if len(out) > 0 && out[len(out)-1].Name >= f[0] {
			return nil, fmt.Errorf("%w: line %d: %q is not after %q", ErrBadManifest, i+2, f[0], out[len(out)-1].Name)
		}
		out = append(out, OutputEntry{Name: f[0], ID: id, Size: n})
	}
	if !bytes.Equal(encodeOutputs(slices.Clone(out)), data) {
		return nil, fmt.Errorf("%w: not in canonical form", ErrBadManifest)
	}
	return out, nil
}
