package slurm

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// job is one array element as squeue shows it.
type job struct {
	ID     string // "<job>_<index>"
	State  string // PENDING, RUNNING, COMPLETED, ...
	Reason string // why it is pending ("None" when it is not)
	Node   string
	Script string // the batch script: which build the runner serves
}

// jobs lists this store's jobs (its name, its user), one entry per array
// element.
func (d *Dispatcher) jobs(ctx context.Context) (map[string]job, error) {
	out, err := run(ctx, "squeue", "-h", "-r", "-t", "all", "--name", d.name, "--user", d.user, "-o", "%i|%T|%r|%N|%o")
	if err != nil {
		return nil, err
	}
	m := map[string]job{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.SplitN(strings.TrimSpace(line), "|", 5)
		if len(f) == 5 {
			m[f[0]] = job{ID: f[0], State: f[1], Reason: f[2], Node: f[3], Script: f[4]}
		}
	}
	return m, nil
}

// final reports whether a job state is one a job never leaves.
func final(state string) bool {
	switch state {
	case "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "GONE":
		return true
	}
	return false
}

// started reports whether a job in state has started on a node.
func started(state string) bool {
	switch state {
	case "PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD":
		return false
	}
	return true
}

// hopeless are pending reasons that do not pass without an administrator
// or another request: the job asks for more than the partition, account
// or QOS allows any job, or for nodes that do not exist.
var hopeless = []string{
	"PartitionConfig", "BadConstraints", "PartitionNodeLimit", "PartitionTimeLimit",
	"InvalidAccount", "InvalidQOS", "AccountNotAllowed", "QOSNotAllowed", "PartitionDown",
	"MaxWallDurationPerJobLimit", "MaxCpuPerJobLimit", "MaxNodePerJobLimit", "MaxMemPerJobLimit",
	"MinCpuPerJobLimit", "MaxTRESPerJob", "MinTRESPerJob", "JobHeldAdmin", "DependencyNeverSatisfied",
}

func isHopeless(reason string) bool {
	for _, h := range hopeless {
		if strings.Contains(reason, h) {
			return true
		}
	}
	return false
}

// runnerState is what the coordinator knows of one runner job.
type runnerState struct {
	job
	build     buildDir
	submitted time.Time // when this coordinator submitted or first saw it
	seen      time.Time // when squeue last listed it
	missing   int       // polls in a row that did not list it
	idle      bool      // running without an attempt at the last look
	cancelled bool      // scancel sent
}

// summary describes runners by state and pending reason, with the age of
// the oldest in each group: "2 RUNNING; 3 PENDING (Resources) for 1m20s";
// key is the same without the ages.
func summary(rs []*runnerState, now time.Time) (text, key string) {
	type group struct {
		n      int
		oldest time.Time
	}
	groups := map[string]*group{}
	for _, r := range rs {
		key := r.State
		if !started(r.State) && r.Reason != "" && r.Reason != "None" {
			key += " (" + r.Reason + ")"
		}
		g := groups[key]
		if g == nil {
			g = &group{oldest: r.submitted}
			groups[key] = g
		}
		g.n++
		if r.submitted.Before(g.oldest) {
			g.oldest = r.submitted
		}
	}
	var parts, keys []string
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		g := groups[k]
		p := fmt.Sprintf("%d %s", g.n, k)
		keys = append(keys, p)
		if !started(strings.Fields(k)[0]) {
			p += " for " + now.Sub(g.oldest).Round(time.Second).String()
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "none", "none"
	}
	return strings.Join(parts, "; "), strings.Join(keys, "; ")
}

// PartitionCPUs is how many CPUs the partition has (its default one if
// partition is ""), as sinfo reports them: the most runners of cpus CPUs
// each that can run at once is this over cpus.
func PartitionCPUs(ctx context.Context, partition string) (int, error) {
	args := []string{"-h", "-o", "%P %C"}
	if partition != "" {
		args = append(args, "-p", partition)
	}
	out, err := run(ctx, "sinfo", args...)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || (partition == "" && !strings.HasSuffix(f[0], "*")) {
			continue
		}
		counts := strings.Split(f[1], "/") // allocated/idle/other/total
		if n, err := strconv.Atoi(counts[len(counts)-1]); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("sinfo names no partition %q", partition)
}
