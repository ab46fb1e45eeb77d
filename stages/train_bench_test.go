package stages_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"zorepro/algos"
	"zorepro/algos/ars"
	"zorepro/envs/linreg"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/trajectory"
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

// BenchmarkTrainLinregARS times ARS on linear regression at d = 10 and
// 100 for the paper's budget (15,000 iterations a task), in the pipeline
// (events, checkpoints, outputs; generation untimed) and in-process
// (algos.Run with the task's own streams and schedule and no recorder:
// the same computation, whose points it checks against the pipeline's
// trajectory bit for bit), alternating in one run, and reports
//
//	in-process-ms  one task's in-process time
//	pipeline-ms    one task's share of the pipeline's wall time (one worker)
//	ratio          pipeline-ms ÷ in-process-ms
//
// for a run of one task (the run's own start and end, a handful of fsyncs,
// included) and for a run of 10 (10 seeds with one worker, as a profile
// runs its seeds, so the run's fixed cost is shared):
//
//	go test -run '^$' -bench TrainLinregARS -benchtime 3x ./stages/
func BenchmarkTrainLinregARS(b *testing.B) {
	seeds := []int{5488, 7152, 6028, 5449, 4237, 6459, 4376, 8918, 9637, 3834}
	for _, d := range []int{10, 100} {
		for _, tasks := range []int{1, 10} {
			b.Run(fmt.Sprintf("d=%d/tasks=%d", d, tasks), func(b *testing.B) {
				list := strings.Trim(strings.ReplaceAll(fmt.Sprint(seeds[:tasks]), " ", ", "), "[]")
				text := strings.NewReplacer("[D]", fmt.Sprintf("[%d]", d), "BUDGET", "300000", "[5488]", "["+list+"]").Replace(trainDAG)
				var inProcess, inPipeline time.Duration
				for range b.N {
					t0 := time.Now()
					trajs := make([]*trajectory.Trajectory, tasks)
					for i, seed := range seeds[:tasks] {
						trajs[i] = trainInProcess(b, d, uint64(seed))
					}
					inProcess += time.Since(t0)
					outs, _ := runDAG(b, text, dagRun{jobs: 1, elapsed: &inPipeline})
					for i, seed := range seeds[:tasks] {
						path := fmt.Sprintf("train/linreg/d=%d/method=ars/seed=%d", d, seed)
						var got trajectory.Trajectory
						if err := got.UnmarshalBinary(lastStore.read(b, outs[path], "trajectory")); err != nil {
							b.Fatal(err)
						}
						if !reflect.DeepEqual(got.Points, trajs[i].Points) {
							b.Fatalf("%s: the pipeline's points differ from the same computation in-process", path)
						}
					}
				}
				per := func(t time.Duration) float64 { return t.Seconds() * 1e3 / float64(b.N*tasks) }
				b.ReportMetric(per(inProcess), "in-process-ms")
				b.ReportMetric(per(inPipeline), "pipeline-ms")
				b.ReportMetric(inPipeline.Seconds()/inProcess.Seconds(), "ratio")
			})
		}
	}
}

// trainInProcess runs what the train/linreg task of trainDAG at d and seed
// runs, without the pipeline: the same instance, streams (the tasks'
// paths are their scopes), method and schedule.
func trainInProcess(b *testing.B, d int, seed uint64) *trajectory.Trajectory {
	in := linreg.Generate(d, stream.New(seed, fmt.Sprintf("generate/linreg/d=%d/seed=%d", d, seed), nil).Rand("instance"))
	cfg := ars.Config{Alpha: 0.03, Directions: 10, Top: 10, Nu: 0.03}
	m, err := ars.Factory[*linreg.Instance, *linreg.Queries]{}.New(cfg, in, stream.New(seed, fmt.Sprintf("train/linreg/d=%d/method=ars/seed=%d", d, seed), nil))
	if err != nil {
		b.Fatal(err)
	}
	traj, err := algos.Run(context.Background(), m, algos.Budget{Samples: 300000}, algos.Schedule{PerDecade: 50}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return traj
}
