package provenance

import (
	_ "embed"
	"encoding/json"
	"sync"

	"zorepro/pipeline/dag"
)

// priorJSON is the task time per stage of reference runs of the smoke and
// quick profiles into fresh stores (how they were measured is in its
// "reference" field; `pipeline status --times --json` on such a store
// gives the numbers).
//
//go:embed prior.json
var priorJSON []byte

// sourcePrior names the estimates taken from priorJSON: a stage of a
// store's first run, which nothing recorded times yet.
const sourcePrior = "reference runs of the profile (pipeline/provenance/prior.json)"

type priorStage struct {
	Tasks       int     `json:"tasks"`
	TaskSeconds float64 `json:"task_seconds"`
}

type prior struct {
	Reference string                           `json:"reference"`
	Profiles  map[string]map[string]priorStage `json:"profiles"`
}

var loadPrior = sync.OnceValue(func() prior {
	var p prior
	if err := json.Unmarshal(priorJSON, &p); err != nil {
		panic("provenance: prior.json: " + err.Error()) // compiled in: a defect, not input
	}
	return p
})

// perTask is the mean task time of t's stage in the reference run of the
// profile (0 when that run has no such stage).
func (p prior) perTask(profile string, t *dag.Task) float64 {
	s := p.Profiles[profile][t.Stage.Name]
	if s.Tasks == 0 {
		return 0
	}
	return s.TaskSeconds / float64(s.Tasks)
}
