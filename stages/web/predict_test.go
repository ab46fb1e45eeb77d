package web

import (
	"path/filepath"
	"testing"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/events"
	"zorepro/pipeline/pipelinetest"
	"zorepro/pipeline/provenance"
	"zorepro/pipeline/store"
	"zorepro/stages"
)

// A server predicts the time left as soon as it starts, before any page
// asks: the first overview would otherwise have no prediction, and
// without one it counts a task another profile's run recorded done as
// this profile's (the paper's report, in the crossover's overview).
func TestServerPredictsAtStart(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	log, err := events.Open(filepath.Join(dir, "store", "events.db"), events.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	plan, err := dag.Load("../../dag.yaml", "smoke", stages.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	asked := make(chan int, 1)
	srv := New(&pipeline.Engine{Plan: plan, Store: st, Events: log, Code: pipelinetest.NewFakeCode(), Platform: pipeline.HostPlatform()},
		Options{Profile: "smoke", Predict: func(xs []provenance.Explained) (Prediction, error) {
			asked <- len(xs)
			return Prediction{Remaining: time.Minute, Workers: 2}, nil
		}})
	select {
	case n := <-asked:
		if n != len(plan.Tasks) {
			t.Errorf("the prediction's dry run explained %d tasks, want the plan's %d", n, len(plan.Tasks))
		}
	case <-time.After(60 * time.Second):
		t.Fatal("no prediction 60 s after the server started, with no page asked for")
	}
	for deadline := time.Now().Add(10 * time.Second); srv.estimate() == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the prediction was made but not kept")
		}
	}
}
