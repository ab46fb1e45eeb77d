package pipeline

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"zorepro/pipeline/store"
)

// entry is one named output of a task.
type entry struct {
	Name string
	ID   store.ID
	Size int64
}

// encodeOutputs is the canonical output manifest: "name id size" lines
// sorted by name. Its content ID is the task's output ID.
func encodeOutputs(es []entry) []byte {
	sort.Slice(es, func(i, j int) bool { return es[i].Name < es[j].Name })
	var b bytes.Buffer
	b.WriteString("zorepro-outputs v1\n")
	for _, e := range es {
		fmt.Fprintf(&b, "%s %s %d\n", e.Name, e.ID, e.Size)
	}
	return b.Bytes()
}

func decodeOutputs(data []byte) ([]entry, error) {
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) == 0 || lines[0] != "zorepro-outputs v1" {
		return nil, fmt.Errorf("not an output manifest")
	}
	var out []entry
	for i, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) != 3 {
			return nil, fmt.Errorf("output manifest line %d: %q", i+2, l)
		}
		id, err := store.ParseID(f[1])
		if err != nil {
			return nil, fmt.Errorf("output manifest line %d: %w", i+2, err)
		}
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("output manifest line %d: %w", i+2, err)
		}
		out = append(out, entry{Name: f[0], ID: id, Size: n})
	}
	return out, nil
}
