package main

import (
	"path/filepath"
	"testing"

	"zorepro/pipeline/dag"
	"zorepro/stages"
)

// The dry run's note on tuning selections without a record of their kind
// concerns the stages whose grids may extend beyond an edge: in the
// crossover profile its pre-sweep and its tuning (extend: 3 in dag.yaml),
// in the paper profile the horizon sweep's tuning and not Fig. 3's, which
// keeps the authors' grids.
func TestExtendingStages(t *testing.T) {
	root := repoRoot(t)
	for _, c := range []struct {
		profile string
		want    map[string]bool
	}{
		{"crossover", map[string]bool{"tune/crossover-presweep": true, "tune/crossover": true}},
		{"paper", map[string]bool{"tune/horizon": true}},
	} {
		plan, err := dag.Load(filepath.Join(root, "dag.yaml"), c.profile, stages.Kinds())
		if err != nil {
			t.Fatal(err)
		}
		got := extendingStages(plan)
		if len(got) != len(c.want) {
			t.Errorf("%s: extending stages %v, want %v", c.profile, got, c.want)
		}
		for s := range c.want {
			if !got[s] {
				t.Errorf("%s: extending stages %v, want %s among them", c.profile, got, s)
			}
		}
	}
}
