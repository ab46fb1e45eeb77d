package stages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"zorepro/pipeline/task"
)

// valid holds, per algorithm name, parameters that decode into a valid
// configuration.
var valid = map[string]map[string]any{
	"ars":        {"alpha": 0.02, "directions": 10, "nu": 0.03, "top": 5},
	"arsv1":      {"alpha": 0.01, "directions": 5, "nu": 0.1},
	"exact":      {"alpha": 0.01, "directions": 5, "nu": 0.1},
	"mnistars":   {"alpha": 0.02, "directions": 10, "nu": 0.03, "top": 5},
	"newton":     {"batch": 64},
	"nreinforce": {"lr": 2},
	"reinforce":  {"lr": 0.08, "batch": 512, "optimizer": "adam"},
	"sgd":        {"lr": 0.1, "batch": 64, "momentum": 0.5},
	"actionrs":   {"t": 100},
	"paramrs":    {"t": 100},
}

// TestTrainersRecordTheirChoices: for every bound algorithm, the tunable
// hyperparameters are fields of its typed configuration, a choice recorded
// from a configuration reads back into an equal one, and a choice with an
// unknown name or a value of the wrong type is refused.
func TestTrainersRecordTheirChoices(t *testing.T) {
	for env, byName := range Trainers() {
		for name, tr := range byName {
			t.Run(env+"/"+name, func(t *testing.T) {
				vals, ok := valid[name]
				if !ok {
					t.Fatalf("add valid parameters of %s to the table", name)
				}
				p := task.NewParams("dag.yaml", "train", vals)
				setup := tr.Decode(p)
				if err := errors.Join(p.Err(), setup.Validate()); err != nil {
					t.Fatal(err)
				}
				choice, err := setup.Choice(tr.Hyper())
				if err != nil {
					t.Fatalf("Choice(%v): %v", tr.Hyper(), err)
				}
				var fields map[string]any
				if err := json.Unmarshal(choice, &fields); err != nil || len(fields) != len(tr.Hyper()) {
					t.Fatalf("choice %s: %v", choice, err)
				}
				for k, v := range fields {
					if want, given := vals[k]; given && fmt.Sprint(v) != fmt.Sprint(want) {
						t.Errorf("choice %s = %v, decoded from %v", k, v, want)
					}
				}
				back, err := setup.Tuned(choice)
				if err != nil {
					t.Fatal(err)
				}
				if again, _ := back.Choice(tr.Hyper()); !bytes.Equal(again, choice) {
					t.Errorf("round trip: %s, then %s", choice, again)
				}
				if _, err := setup.Tuned(json.RawMessage(`{"no_such_parameter": 1}`)); err == nil {
					t.Error("a choice with an unknown name was accepted")
				}
				if h := tr.Hyper(); len(h) > 0 {
					if _, err := setup.Tuned(json.RawMessage(`{"` + h[0] + `": "text"}`)); err == nil {
						t.Errorf("a string for %s was accepted", h[0])
					}
				}
				if cs := tr.Components(); len(cs) != 2 || reflect.TypeOf(cs[0]).PkgPath() == reflect.TypeOf(cs[1]).PkgPath() {
					t.Errorf("components %T, %T: want the environment and the algorithm", cs[0], cs[1])
				}
			})
		}
	}
}

// TestRegistryNames: every environment that trains also evaluates and
// generates, under the same name.
func TestRegistryNames(t *testing.T) {
	var trains, evals, gens []string
	for n := range Trainers() {
		trains = append(trains, n)
	}
	for n := range Evaluators() {
		evals = append(evals, n)
	}
	for n := range Generators() {
		gens = append(gens, n)
	}
	slices.Sort(trains)
	slices.Sort(evals)
	slices.Sort(gens)
	if !slices.Equal(trains, evals) || !slices.Equal(trains, gens) {
		t.Errorf("trainers %v, evaluators %v, generators %v", trains, evals, gens)
	}
}
