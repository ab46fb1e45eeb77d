package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A first run predicts its time from the reference runs of its profile
// (pipeline/provenance/prior.json) where the store records nothing yet:
// every task of a fresh smoke or quick plan is timed, and the task time is
// the reference runs' (issue 43: a fresh smoke store predicted "at least
// ~2s" for a run of 9 to 12 s, every untimed task counted as none). How
// close that is to a run on this machine is measured, not timed here:
// docs/install-and-costs.md gives both.
func TestFirstRunEstimateFromReferenceRuns(t *testing.T) {
	bin, root := binary(t), repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "pipeline", "provenance", "prior.json"))
	if err != nil {
		t.Fatal(err)
	}
	var prior struct {
		Profiles map[string]map[string]struct {
			Tasks       int     `json:"tasks"`
			TaskSeconds float64 `json:"task_seconds"`
		} `json:"profiles"`
	}
	if err := json.Unmarshal(data, &prior); err != nil {
		t.Fatal(err)
	}
	for _, profile := range []string{"smoke", "quick"} {
		want := 0.0
		for _, s := range prior.Profiles[profile] {
			want += s.TaskSeconds
		}
		store := filepath.Join(t.TempDir(), "store")
		out, code := cliStdout(t, bin, root, "run", "--dry-run", "--json", "--profile", profile, "--store", store)
		var got struct {
			Schedule struct {
				Tasks    int           `json:"tasks"`
				Untimed  int           `json:"tasks_untimed"`
				TaskTime time.Duration `json:"task_time"`
				Walls    []struct {
					Workers int           `json:"workers"`
					Wall    time.Duration `json:"wall"`
				} `json:"walls"`
				Stages []struct {
					Stage    string        `json:"stage"`
					Tasks    int           `json:"tasks"`
					Timed    int           `json:"tasks_timed"`
					TaskTime time.Duration `json:"task_time"`
				} `json:"stages"`
			} `json:"schedule"`
		}
		if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
			t.Fatalf("%s: exit %d, %v\n%.500s", profile, code, err, out)
		}
		s := got.Schedule
		if s.Tasks == 0 || s.Untimed != 0 || math.Abs(s.TaskTime.Seconds()-want) > 1 {
			t.Errorf("%s on a fresh store: %d tasks, %d untimed, task time %v; want all timed and the reference runs' %.0fs", profile, s.Tasks, s.Untimed, s.TaskTime, want)
		}
		t.Logf("%s, fresh store: %d tasks, %v of task time, %v on %d workers", profile, s.Tasks, s.TaskTime, s.Walls[0].Wall, s.Walls[0].Workers)
		// Each stage's share (the browser view's "time left" column) is
		// its reference runs' task time, and the shares add up to all
		// of it, every task in one stage (each time is to the second).
		var tasks int
		var sum time.Duration
		for _, st := range s.Stages {
			tasks, sum = tasks+st.Tasks, sum+st.TaskTime
			if ref, ok := prior.Profiles[profile][st.Stage]; !ok || st.Timed != st.Tasks || math.Abs(st.TaskTime.Seconds()-ref.TaskSeconds) > 0.5 {
				t.Errorf("%s, stage %s: %d tasks, %d timed, %v; want all timed and the reference runs' %.2fs", profile, st.Stage, st.Tasks, st.Timed, st.TaskTime, ref.TaskSeconds)
			}
		}
		if tasks != s.Tasks || len(s.Stages) != len(prior.Profiles[profile]) || math.Abs((sum-s.TaskTime).Seconds()) > 0.5*float64(len(s.Stages)) {
			t.Errorf("%s: %d stages of %d tasks and %v, want the schedule's %d stages, %d tasks and %v", profile, len(s.Stages), tasks, sum, len(prior.Profiles[profile]), s.Tasks, s.TaskTime)
		}
		if _, err := os.Stat(store); err == nil {
			t.Errorf("%s: a dry run created the store", profile)
		}
	}
}
