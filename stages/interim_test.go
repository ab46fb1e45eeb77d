package stages_test

import (
	"context"
	"reflect"
	"testing"

	"zorepro/pipeline"
	"zorepro/pipeline/dag"
	"zorepro/stages"
	"zorepro/stages/interim"
)

// An interim report plots a figure whose plot task is not recorded from
// its recorded inputs; with a Memo, a second computation on the same
// inputs reuses that figure instead of plotting it again (serve's claims
// page computes every 20 s while it is read), and gives the same claims.
// The smoke profile's online-regret runs, recorded up to their
// evaluations, make olr-regret.
func TestInterimMemoReusesAFigureOnTheSameInputs(t *testing.T) {
	plan, err := dag.LoadProfile("../dag.yaml", "smoke", stages.Kinds())
	if err != nil {
		t.Fatal(err)
	}
	upstream, err := plan.Only([]string{"evaluate/olr"})
	if err != nil {
		t.Fatal(err)
	}
	st, log, code := openStore(t, t.TempDir())
	defer log.Close()
	run := &pipeline.Engine{Plan: upstream, Store: st, Events: log, Code: code, Platform: pipeline.HostPlatform(), Opt: pipeline.Options{Jobs: 2}}
	if _, err := run.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	eng := &pipeline.Engine{Plan: plan, Store: st, Events: log, Code: code, Platform: pipeline.HostPlatform(), Opt: pipeline.Options{Jobs: 2}}
	olr := func(d *interim.Doc) interim.Figure {
		t.Helper()
		for _, f := range d.Figures {
			if f.Task == "plot/olr-regret" {
				if f.Plotted != interim.PlottedHere || len(f.Images) == 0 {
					t.Fatalf("plot/olr-regret: plotted %q with %d images, want plotted here", f.Plotted, len(f.Images))
				}
				return f
			}
		}
		t.Fatal("no plot/olr-regret among the interim report's figures")
		return interim.Figure{}
	}
	var memo interim.Memo
	first, err := interim.Compute(context.Background(), eng, "report", "smoke", &memo)
	if err != nil {
		t.Fatal(err)
	}
	second, err := interim.Compute(context.Background(), eng, "report", "smoke", &memo)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := interim.Compute(context.Background(), eng, "report", "smoke", nil)
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b interim.Figure) bool {
		return reflect.ValueOf(a.Images).Pointer() == reflect.ValueOf(b.Images).Pointer()
	}
	if !same(olr(first), olr(second)) {
		t.Error("the second computation with the memo plotted olr-regret again")
	}
	if same(olr(first), olr(alone)) || !reflect.DeepEqual(olr(first).Images, olr(alone).Images) {
		t.Error("a computation without the memo did not plot olr-regret anew, or plotted other bytes")
	}
	if len(first.Claims) == 0 || !reflect.DeepEqual(first.Claims, second.Claims) || !reflect.DeepEqual(first.Claims, alone.Claims) {
		t.Errorf("the claims differ between computations: %d, %d, %d", len(first.Claims), len(second.Claims), len(alone.Claims))
	}
}
