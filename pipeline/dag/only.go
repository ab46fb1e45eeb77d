package dag

import (
	"fmt"
	"strings"
)

// Only returns the plan cut down to the tasks that targets name and
// everything upstream of them, in the same order, re-indexed. A target is
// a stage name (all its tasks), a task path, or a prefix of either that
// ends at a "/" boundary (e.g. "plot/fig2-linreg", "train/linreg/d=1000").
// Task identities do not depend on the plan, so a cut-down run caches and
// resumes exactly what a full run would. The plan p must not be used
// afterwards (its tasks are shared and re-indexed).
func (p *Plan) Only(targets []string) (*Plan, error) {
	if len(targets) == 0 {
		return p, nil
	}
	keep := make([]bool, len(p.Tasks))
	var mark func(t *Task)
	mark = func(t *Task) {
		if keep[t.Index] {
			return
		}
		keep[t.Index] = true
		for _, d := range t.Deps {
			mark(d)
		}
	}
	var unknown []string
	for _, target := range targets {
		target = strings.TrimSuffix(target, "/")
		n := 0
		for _, t := range p.Tasks {
			if t.Path == target || strings.HasPrefix(t.Path, target+"/") {
				mark(t)
				n++
			}
		}
		if n == 0 {
			unknown = append(unknown, target)
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("%w: %s: no stage or task matches %q (see `pipeline dag`)", ErrInvalid, p.File, unknown)
	}
	out := &Plan{File: p.File, Profile: p.Profile, byPath: map[string]*Task{}}
	stages := map[*Stage]bool{}
	for _, t := range p.Tasks {
		if !keep[t.Index] {
			continue
		}
		stages[t.Stage] = true
		out.byPath[t.Path] = t
		out.Tasks = append(out.Tasks, t)
	}
	for i, t := range out.Tasks {
		t.Index = i
	}
	for _, s := range p.Stages {
		if stages[s] {
			out.Stages = append(out.Stages, s)
		}
	}
	return out, nil
}
