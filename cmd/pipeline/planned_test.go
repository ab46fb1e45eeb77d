package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A store can record several outputs of one task path: here plot/fig3c-lqr
// of the smoke dag.yaml and then of another dag.yaml (another title), as
// when the horizon-long profile shares the paper run's store. show, replay
// and verify take the output this binary and dag.yaml would reuse, not the
// latest run's; where none is recorded, show says so and shows the latest.
func TestShowReplayVerifyTakeThePlansOutput(t *testing.T) {
	t.Parallel() // no clock in its checks; see tests.md
	bin, root, dir := binary(t), repoRoot(t), t.TempDir()
	common := []string{"--dag", filepath.Join(root, "dag.yaml"), "--profile", "smoke",
		"--store", filepath.Join(dir, "store"), "--figures", filepath.Join(dir, "fig")}
	retitled := func(name, title string) []string {
		args := append([]string(nil), common...)
		args[1] = writeFile(t, dir, name+".yaml", strings.Replace(string(readFile(t, common[1])), "LQR: samples until", title+": samples until", 1))
		args[7] = filepath.Join(dir, name)
		return args
	}
	other, unrun := retitled("other", "LQR (another title)"), retitled("unrun", "LQR (a title never run)")
	pipelineRun(t, bin, root, append([]string{"plot/fig3c-lqr"}, common...)...)
	pipelineRun(t, bin, root, append([]string{"plot/fig3c-lqr"}, other...)...)

	const task, svg = "plot/fig3c-lqr", "fig3c-lqr.svg"
	mine, others := string(readFile(t, filepath.Join(dir, "fig", svg))), string(readFile(t, filepath.Join(dir, "other", svg)))
	if mine == others {
		t.Fatal("the two dag.yaml files drew the same figure")
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{{"the smoke dag.yaml", common, mine}, {"the other dag.yaml", other, others}} {
		if out, code := cliStdout(t, bin, root, withFlags([]string{"show", task, svg}, c.args...)...); code != 0 || out != c.want {
			t.Errorf("show %s %s with %s: exit %d, not the figure that dag.yaml drew", task, svg, c.name, code)
		}
		if out, code := cli(t, bin, root, withFlags([]string{"show", task}, c.args...)...); code != 0 || strings.Contains(out, "note:") {
			t.Errorf("show %s with %s: exit %d, or a note where the plan's output is recorded\n%s", task, c.name, code, out)
		}
	}
	out, code := cli(t, bin, root, withFlags([]string{"show", task}, unrun...)...)
	if code != 0 || !strings.Contains(out, "note: plot/fig3c-lqr: nothing is recorded for what this binary and dag.yaml would run") {
		t.Errorf("show %s with a dag.yaml never run: exit %d, want 0 and a note that it shows the latest\n%s", task, code, out)
	}
	if out, code := cliStdout(t, bin, root, withFlags([]string{"show", task, svg}, unrun...)...); code != 0 || out != others {
		t.Errorf("show %s %s with a dag.yaml never run: exit %d, not the latest recorded figure", task, svg, code)
	}
	for _, c := range []struct {
		args []string
		want bool
	}{{common, true}, {unrun, false}} {
		js, code := cliStdout(t, bin, root, withFlags([]string{"show", task, "--json"}, c.args...)...)
		if doc := oneDocument(t, js); code != 0 || doc["planned"] != c.want {
			t.Errorf("show %s --json: exit %d, planned %v, want %v", task, code, doc["planned"], c.want)
		}
	}
	if out, code := cli(t, bin, root, withFlags([]string{"replay", task}, common...)...); code != 0 || !strings.Contains(out, ": identical") {
		t.Errorf("replay %s with the smoke dag.yaml after another's run: exit %d\n%s", task, code, out)
	}
	if out, code := cli(t, bin, root, withFlags([]string{"verify", task}, common...)...); code != 0 || !strings.Contains(out, "tasks reproduced") {
		t.Errorf("verify %s with the smoke dag.yaml after another's run: exit %d\n%s", task, code, out)
	}
	if out, code := cli(t, bin, root, withFlags([]string{"replay", task}, unrun...)...); code == 0 || !strings.Contains(out, "changed") {
		t.Errorf("replay %s with a dag.yaml never run: exit %d, want a refusal naming what changed\n%s", task, code, out)
	}
}
