//go:build mujoco

package stages_test

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"zorepro/algos"
	"zorepro/algos/ars"
	"zorepro/algos/episodic"
	"zorepro/algos/episodic/episodictest"
	"zorepro/algos/exact"
	"zorepro/envs/mujoco"
	"zorepro/pipeline/stream"
)

// TestMuJoCoTrainParallel: ARS V1 and ExAct train on an instance; their parallel
// iterations reproduce the serial weights bit for bit.
func TestMuJoCoTrainParallel(t *testing.T) {
	par := func(n int, fn func(int) error) error {
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = fn(i) }()
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	for _, name := range mujoco.Names() {
		in, err := mujoco.NewInstance(name, 5, mujoco.DefaultEpisodes)
		if err != nil {
			t.Fatal(err)
		}
		train := func(p func(int, func(int) error) error, useExact bool) []float64 {
			src := stream.New(81856320, "train/"+name, nil)
			var m algos.Method
			if useExact {
				m = episodictest.Must(t, exact.New, exact.Config{Config: episodic.Config{Alpha: 0.01, Directions: 4, Nu: 0.2}, Variant: exact.OneStep}, in, src, p)
			} else {
				m = episodictest.Must(t, ars.NewV1, ars.V1Config{Alpha: 0.05, Directions: 4, Nu: 0.1}, in, src, p)
			}
			for it := int64(0); it < 4; it++ {
				if _, err := m.Step(it); err != nil {
					t.Fatal(err)
				}
			}
			return slices.Clone(m.Params())
		}
		for _, ex := range []bool{false, true} {
			serial, parallel := train(nil, ex), train(par, ex)
			if !slices.Equal(serial, parallel) || slices.Equal(serial, make([]float64, len(serial))) {
				t.Errorf("%s exact=%v: serial %v, parallel %v", name, ex, serial[:3], parallel[:3])
			}
		}
	}
}
