package main

import (
	"sort"

	"zorepro/pipeline/dag"
)

func sortedSlotNames(m map[string][]*dag.Task) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
