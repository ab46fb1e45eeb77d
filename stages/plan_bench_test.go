package stages_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"zorepro/pipeline/dag"
	"zorepro/stages"
)

var planScale = flag.Int("plan.scale", 400, "BenchmarkPlanScaled: how many times the evaluation seed lists are repeated (400: about 1.18 million tasks)")

// scaledDAG writes the repository's dag.yaml with its evaluation seed lists
// (eval, mujoco_eval, lqr_eval) repeated k times under new seeds, so that
// every evaluation matrix grows k-fold: the paper profile's matrices scaled
// up.
func scaledDAG(tb testing.TB, k int) string {
	tb.Helper()
	b, err := os.ReadFile("../dag.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	text := string(b)
	for _, list := range []string{"eval", "mujoco_eval", "lqr_eval"} {
		head := "\n  " + list + ": ["
		i := strings.Index(text, head)
		if i < 0 {
			tb.Fatalf("dag.yaml has no seed list %s", list)
		}
		i += len(head)
		j := i + strings.Index(text[i:], "]")
		var seeds []string
		for r := 0; r < k; r++ {
			for _, s := range strings.Split(text[i:j], ",") {
				var n int
				fmt.Sscan(strings.TrimSpace(s), &n)
				seeds = append(seeds, fmt.Sprint(n+100000000*r))
			}
		}
		text = text[:i] + strings.Join(seeds, ", ") + text[j:]
	}
	path := filepath.Join(tb.TempDir(), "dag.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkPlanScaled plans the paper profile with its evaluation matrices
// scaled up (-plan.scale; the default gives about 1.18 million tasks),
// every other profile checked as a run does. Planning time and memory are
// linear in the tasks: it reports the tasks, the time per task and the heap
// the process obtained from the OS (its peak heap). Measured in the README:
//
//	go test -tags "mujoco openblas" -run '^$' -bench PlanScaled -benchtime 1x ./stages
func BenchmarkPlanScaled(b *testing.B) {
	path := scaledDAG(b, *planScale)
	kinds := stages.Kinds()
	b.ResetTimer()
	var tasks int
	for range b.N {
		plan, err := dag.Load(path, "paper", kinds)
		if err != nil {
			b.Fatal(err)
		}
		tasks = len(plan.Tasks)
	}
	b.StopTimer()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(tasks), "tasks")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(tasks), "ns/task")
	b.ReportMetric(float64(ms.HeapSys)/(1<<20), "heap-MiB")
}
