package dag_test

import (
	"errors"
	"strings"
	"testing"

	"zorepro/pipeline/dag"
)

func TestOnlyKeepsTargetsAndTheirAncestors(t *testing.T) {
	cases := []struct {
		targets []string
		want    string
	}{
		{[]string{"train/d=100"}, "data/d=100/seed=1 data/d=100/seed=2 train/d=100/seed=1 train/d=100/seed=2"},
		{[]string{"train/d=10/seed=2", "data/d=100/seed=1"}, "data/d=10/seed=2 data/d=100/seed=1 train/d=10/seed=2"},
		{[]string{"figure"}, "data/d=10/seed=1 data/d=10/seed=2 data/d=100/seed=1 data/d=100/seed=2 train/d=10/seed=1 train/d=10/seed=2 train/d=100/seed=1 train/d=100/seed=2 figure"},
		{[]string{"data/"}, "data/d=10/seed=1 data/d=10/seed=2 data/d=100/seed=1 data/d=100/seed=2"},
	}
	for _, c := range cases {
		plan, err := dag.Load(write(t, good), "paper", kinds)
		if err != nil {
			t.Fatal(err)
		}
		cut, err := plan.Only(c.targets)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for i, tk := range cut.Tasks {
			paths = append(paths, tk.Path)
			if tk.Index != i || cut.Task(tk.Path) != tk {
				t.Errorf("%v: task %s has index %d at %d", c.targets, tk.Path, tk.Index, i)
			}
			for _, d := range tk.Deps {
				if cut.Task(d.Path) != d || d.Index >= i {
					t.Errorf("%v: %s depends on %s, not before it in the cut plan", c.targets, tk.Path, d.Path)
				}
			}
		}
		if got := strings.Join(paths, " "); got != c.want {
			t.Errorf("Only(%v):\n got %s\nwant %s", c.targets, got, c.want)
		}
	}
	plan, _ := dag.Load(write(t, good), "paper", kinds)
	// "train/d=1" is not a "/"-bounded prefix of train/d=10/...: no match.
	if _, err := plan.Only([]string{"train/d=1", "nope"}); !errors.Is(err, dag.ErrInvalid) || !strings.Contains(err.Error(), `["train/d=1" "nope"]`) {
		t.Fatalf("unknown targets: %v", err)
	}
}
