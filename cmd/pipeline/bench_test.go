package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkNoopSmokeRun times `pipeline run --profile smoke` after a full
// run of the same profile: planning, identity, cache verification and
// figure export with nothing to execute (target: well under 1 s).
func BenchmarkNoopSmokeRun(b *testing.B) {
	bin := binary(b)
	root := repoRoot(b)
	dir := b.TempDir()
	args := []string{"run", "--dag", filepath.Join(root, "dag.yaml"), "--profile", "smoke", "--store", filepath.Join(dir, "store"), "--figures", filepath.Join(dir, "fig")}
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		b.Fatalf("full run: %v\n%s", err, out)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			b.Fatalf("no-op run: %v\n%s", err, out)
		}
	}
}
