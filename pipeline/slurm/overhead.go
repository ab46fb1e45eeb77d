package slurm

import (
	"encoding/json"
	"os"
	"time"

	"zorepro/pipeline/atomicfile"
)

// overhead is what running attempts through runners has cost this store:
// the time an attempt spends outside its worker when a runner is free
// (the runner's claim and the end marker's detection; not the wait for a
// busy runner, which the schedule accounts for) and the time a runner
// waits in Slurm's queue before it starts. It is kept in <store>/slurm/overhead.json
// across runs, for the dry run's prediction (Overhead).
type overhead struct {
	Attempts   int     `json:"attempts"`
	Outside    float64 `json:"outside_seconds"` // summed over attempts
	Work       float64 `json:"work_seconds"`    // the workers' own time, summed
	Starts     int     `json:"runner_starts"`
	StartWaits float64 `json:"start_wait_seconds"` // summed over runner starts
}

func (o *overhead) attempt(outside, work time.Duration) {
	o.Attempts++
	o.Outside += outside.Seconds()
	o.Work += work.Seconds()
}

func (o *overhead) start(wait time.Duration) {
	o.Starts++
	o.StartWaits += wait.Seconds()
}

func (o *overhead) load(path string) {
	if data, err := os.ReadFile(path); err == nil {
		json.Unmarshal(data, o)
	}
}

func (o *overhead) save(path string) {
	if o.Attempts+o.Starts == 0 {
		return
	}
	data, _ := json.MarshalIndent(o, "", "  ")
	atomicfile.WriteFile(path, append(data, '\n'))
}

// Overhead is the executor's measured cost in a store: the mean time an
// attempt spends outside its worker, and the mean wait of a runner job in
// Slurm's queue; ok is false before any attempt ran there through Slurm.
func Overhead(store string) (perAttempt, perRunner time.Duration, attempts int, ok bool) {
	var o overhead
	o.load(store + "/slurm/overhead.json")
	if o.Attempts == 0 {
		return 0, 0, 0, false
	}
	perAttempt = time.Duration(o.Outside / float64(o.Attempts) * float64(time.Second))
	if o.Starts > 0 {
		perRunner = time.Duration(o.StartWaits / float64(o.Starts) * float64(time.Second))
	}
	return perAttempt, perRunner, o.Attempts, true
}
