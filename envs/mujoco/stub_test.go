//go:build !mujoco

package mujoco

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

const unavailableMsg = "MuJoCo unavailable: install libmujoco-dev and build with -tags mujoco"

// TestStubUnavailable: without the mujoco tag every entry point that needs
// the simulator fails with ErrUnavailable and its install hint.
func TestStubUnavailable(t *testing.T) {
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: err = %v, want ErrUnavailable", what, err)
		} else if err.Error() != unavailableMsg {
			t.Errorf("%s: message %q, want %q", what, err.Error(), unavailableMsg)
		}
	}
	_, _, err := Version()
	check("Version", err)
	for _, name := range ownNames() {
		_, err = Open(name)
		check("Open "+name, err)
		_, err = NewInstance(name, 15, DefaultEpisodes)
		check("NewInstance "+name, err)
	}
	if _, err := Open("octopus"); !errors.Is(err, ErrUnknownEnv) {
		t.Errorf("Open(ant): err = %v", err)
	}
	var m Model
	_, err = m.Rollout(rand.New(rand.NewPCG(1, 2)), nil, 1, -1, nil, nil)
	check("Rollout", err)
	_, err = m.NewSim()
	check("NewSim", err)

	p := task.NewParams("dag.yaml", "generate/mujoco", map[string]any{"name": Swimmer, "horizon": 15})
	gen := Env{}.PlanGenerate(p)
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	_, err = gen(stream.New(1, "generate", nil))
	check("generate", err)

	// A well-formed artifact still cannot be loaded.
	s, _ := Lookup(Swimmer)
	in := &Instance{Name: Swimmer, H: 15, Episodes: 100, ModelSHA256: s.SHA256(), MuJoCo: WantVersion}
	b, err := in.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Env{}.Load(b)
	check("Load", err)
	if got := (Env{}).NativeVersions(); !slices.Equal(got, []string{"mujoco unavailable"}) {
		t.Errorf("NativeVersions = %q", got)
	}
}
