package main

import (
	"sort"
	"strconv"

	"zorepro/pipeline/dag"
)

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func sortedSlotNames(m map[string][]*dag.Task) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
