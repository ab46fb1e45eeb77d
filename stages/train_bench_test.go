package stages_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"zorepro/algos"
	"zorepro/algos/ars"
	"zorepro/envs/linreg"
	"zorepro/pipeline/stream"
)

// trainDAG trains ARS on linear regression at d = D for the paper's
// budget, with the profile's snapshot schedule.
const trainDAG = `version: 1
stages:
  - name: generate/linreg
    kind: generate
    params: {env: linreg}
    matrix: {d: [D], seed: [5488]}
  - name: train/linreg
    kind: train
    inputs: {data: generate/linreg}
    matrix: {d: [D], method: [ars], seed: [5488]}
    params: {env: linreg, budget: BUDGET, alpha: 0.03, directions: 10, top: 10, nu: 0.03, snapshot_every: 0, snapshot_per_decade: 50}
`

// BenchmarkTrainLinregARS times one train/linreg task of ARS at d = 10
// and 100 (15,000 iterations) in the pipeline (its events, checkpoints
// and outputs; generation untimed) and the same method in-process
// (algos.Run with the same schedule and no recorder), in one run:
//
//	go test -run '^$' -bench TrainLinregARS -benchtime 10x ./stages/
func BenchmarkTrainLinregARS(b *testing.B) {
	for _, d := range []int{10, 100} {
		b.Run(fmt.Sprintf("d=%d/in-process", d), func(b *testing.B) {
			in := linreg.Generate(d, stream.New(5488, "generate/linreg", nil).Rand("instance"))
			cfg := ars.Config{Alpha: 0.03, Directions: 10, Top: 10, Nu: 0.03}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m, err := ars.Factory[*linreg.Instance, *linreg.Queries]{}.New(cfg, in, stream.New(5488, "train/linreg", nil))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := algos.Run(context.Background(), m, algos.Budget{Samples: 300000}, algos.Schedule{PerDecade: 50}, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("d=%d/pipeline", d), func(b *testing.B) {
			text := strings.NewReplacer("[D]", fmt.Sprintf("[%d]", d), "BUDGET", "300000").Replace(trainDAG)
			for i := 0; i < b.N; i++ {
				runStagesDAG(b, text, false)
			}
		})
	}
}
