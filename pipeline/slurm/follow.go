package slurm

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"zorepro/pipeline"
)

// every calls fn every interval, and at once when wake delivers (nil:
// never), until Close.
func (d *Dispatcher) every(interval time.Duration, wake <-chan struct{}, fn func()) {
	defer d.done.Done()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-d.quit:
			return
		case <-tick.C:
		case <-wake:
		}
		fn()
	}
}

// lookAtMarkers reports attempts' ends from the runners' end markers and
// starts runners for queued attempts (every markerPoll, or when poked).
func (d *Dispatcher) lookAtMarkers() {
	d.readMarkers()
	d.provision()
}

// readMarkers ends every live attempt whose end marker has appeared.
func (d *Dispatcher) readMarkers() {
	d.mu.Lock()
	builds := map[buildDir]bool{}
	for _, at := range d.live {
		builds[at.build] = true
	}
	d.mu.Unlock()
	for b := range builds {
		for _, t := range names(b.ended("")) {
			d.mu.Lock()
			at := d.live[t]
			d.mu.Unlock()
			if at == nil {
				continue
			}
			m, ok, err := b.readMarker(t)
			if !ok && err == nil {
				continue
			}
			os.Remove(b.ended(t))
			seen := time.Now()
			d.mu.Lock()
			if err != nil {
				d.finish(at, pipeline.Ended{State: stateFailed, Detail: err.Error()}, nil)
			} else {
				// The hand-over: the runner's claim, from when both the
				// ticket and the runner were there (not the wait for a
				// busy runner), and the marker's detection.
				began, ended, free := time.Unix(0, m.Began), time.Unix(0, m.Ended), time.Unix(0, m.Free)
				ready := at.queued
				if free.After(ready) {
					ready = free
				}
				d.stats.attempt(max(began.Sub(ready), 0)+max(seen.Sub(ended), 0), ended.Sub(began))
				d.finish(at, pipeline.Ended{State: m.State, Detail: m.Detail, Log: d.logOf(m.Runner)}, nil)
			}
			d.progress = seen
			d.mu.Unlock()
		}
	}
}

// provision submits runners for queued attempts that no idle or pending
// runner will take: at most MaxJobs runners at once, and at most as many
// pending as are running (at least 4), so that a cluster with few free
// CPUs is not flooded with jobs that would only wait.
func (d *Dispatcher) provision() {
	queued := len(names(d.build.queue()))
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	if queued > 0 {
		d.queuedAt = now
	}
	if queued == 0 || now.Before(d.blocked) || d.halt != nil {
		return
	}
	pending, running, idle := d.counts()
	want := min(queued-idle-pending-d.submitting,
		d.cfg.MaxJobs-pending-running-d.submitting,
		max(4, running)-pending-d.submitting,
		maxArray)
	if want <= 0 {
		return
	}
	d.submitting += want
	go d.submit(want, queued)
}

// counts counts the current build's runners that have not ended: pending,
// running, and running without an attempt at the last look (d.mu held).
func (d *Dispatcher) counts() (pending, running, idle int) {
	for id, r := range d.runners {
		if r.build != d.build || d.gone[id] {
			continue
		}
		switch {
		case !started(r.State):
			pending++
		case r.idle:
			running++
			idle++
		default:
			running++
		}
	}
	return pending, running, idle
}

// submit submits one job array of k runners, retrying transient failures
// for up to LostAfter. If it fails and no runner of this build is left to
// take the queued attempts, they fail.
func (d *Dispatcher) submit(k, queued int) {
	args := []string{"--parsable", "--job-name", d.name, "--array", fmt.Sprintf("0-%d", k-1),
		"--output", d.cfg.LogDir + "/%A_%a.out", "--chdir", d.cfg.Store, // the worker moves to its spec's directory
		"--cpus-per-task", strconv.Itoa(d.cfg.CPUs), "--no-requeue", "--kill-on-invalid-dep=yes"}
	for _, o := range [][2]string{{"--partition", d.cfg.Partition}, {"--account", d.cfg.Account}, {"--time", d.cfg.Time}, {"--mem", d.cfg.Mem}} {
		if o[1] != "" {
			args = append(args, o[0], o[1])
		}
	}
	args = append(append(args, d.cfg.Args...), d.script)
	out, err := retry(d.ctx, d.cfg.LostAfter, d.cfg.Log, "sbatch", args...)
	var id string
	if err == nil {
		id, err = parseJobID(out)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.submitting -= k
	now := time.Now()
	if err != nil {
		d.blocked = now.Add(30 * time.Second)
		if pending, running, _ := d.counts(); pending+running+d.submitting > 0 {
			d.cfg.Log("sbatch failed (%v); the running runners go on, a new submission in 30s", err)
			return
		}
		// No runner is left to take the queue, and sbatch refuses the
		// same request again (or has failed for LostAfter): every
		// attempt, queued or to come, fails at once.
		d.halt = fmt.Errorf("%w: %w", ErrSubmit, err)
		d.cfg.Log("%s", strings.TrimPrefix(d.halt.Error(), "slurm: "))
		d.failQueued(d.halt)
		return
	}
	d.cfg.Log("submitted runner job %s (%d element(s)) for %d queued attempt(s)", id, k, queued)
	for i := range k {
		el := fmt.Sprintf("%s_%d", id, i)
		if d.runners[el] == nil {
			d.runners[el] = &runnerState{job: job{ID: el, State: "PENDING"}, build: d.build, submitted: now, seen: now}
		}
	}
}

// failQueued fails every attempt of this build that no runner has taken
// (d.mu held).
func (d *Dispatcher) failQueued(err error) {
	for _, at := range d.live {
		if at.build == d.build && at.build.withdraw(at.ticket) {
			d.finish(at, pipeline.Ended{}, err)
		}
	}
}

// pollJobs is one look at the runners: their states (squeue), which
// attempts they hold and whether those grow; it ends the attempts of
// runners that ended, reports pending reasons, and stops what cannot
// progress (an outage past LostAfter, jobs that can never start, a run
// without progress for StallAfter).
func (d *Dispatcher) pollJobs() {
	d.mu.Lock()
	idle := len(d.live) == 0 && len(d.runners) == 0
	d.mu.Unlock()
	if idle {
		return
	}
	jobs, err := d.jobs(d.ctx)
	now := time.Now()
	d.mu.Lock()
	var ended []*runnerState
	var lost []*attempt
	if err != nil {
		lost = d.outage(err, now)
	} else {
		if !d.failing.IsZero() {
			d.cfg.Log("the controller answers again, after %s", now.Sub(d.failing).Round(time.Second))
			d.failing = time.Time{}
		}
		ended = d.update(jobs, now)
	}
	d.mu.Unlock()
	for _, at := range lost {
		d.stop(at)
	}
	for _, r := range ended {
		d.endClaims(r)
	}
	d.lookAtClaims(now)
	d.mu.Lock()
	cancel, stuck := d.judge(now)
	d.mu.Unlock()
	for _, at := range stuck {
		d.stop(at)
	}
	d.cancelRunners(cancel)
}

// outage handles a failed squeue: the attempts without a sign of life
// since the outage began, for longer than LostAfter, are lost: a claimed
// one by its own signs (its file grows, its marker), a queued one by the
// run's (runners that work will take it) (d.mu held).
func (d *Dispatcher) outage(err error, now time.Time) []*attempt {
	if d.failing.IsZero() {
		d.failing = now
		d.cfg.Log("squeue failed (%v); retrying every %s: attempts whose runners show signs of life go on, the others fail after %s (--slurm-outage)", err, d.cfg.Poll, d.cfg.LostAfter)
	}
	var lost []*attempt
	for _, at := range d.live {
		since := at.sign
		if at.runner == "" && since.Before(d.progress) {
			since = d.progress // queued: it waits for runners that work
		}
		if since.Before(d.failing) {
			since = d.failing
		}
		if now.Sub(since) > d.cfg.LostAfter {
			lost = append(lost, at)
			e := fmt.Errorf("%w: squeue has failed for %s (--slurm-outage %s) and attempt %s showed no sign of life since %s; its runner, if it still runs, is asked to stop it: %w",
				ErrLost, now.Sub(d.failing).Round(time.Second), d.cfg.LostAfter, at.a.Name, since.Format(time.TimeOnly), err)
			d.cfg.Log("%s: %s", at.a.Task, strings.TrimPrefix(e.Error(), "slurm: "))
			d.finish(at, pipeline.Ended{}, e)
		}
	}
	return lost
}

// stop withdraws an attempt that failed here from the queue or asks its
// runner to stop it.
func (d *Dispatcher) stop(at *attempt) {
	if !at.build.withdraw(at.ticket) {
		publish(at.build.cancel(at.ticket), nil)
	}
}

// update takes in squeue's view of the runners and returns those that
// have ended since the last look (d.mu held).
func (d *Dispatcher) update(jobs map[string]job, now time.Time) []*runnerState {
	for id, j := range jobs {
		if d.gone[id] {
			continue
		}
		r := d.runners[id]
		if r == nil { // e.g. sbatch accepted a job but its answer was lost
			if final(j.State) || !strings.HasPrefix(j.Script, string(d.build)) {
				continue
			}
			r = &runnerState{job: j, build: d.build, submitted: now}
			d.runners[id] = r
		}
		if !started(r.State) && started(j.State) {
			d.progress = now
			d.stats.start(now.Sub(r.submitted))
		}
		r.job.State, r.job.Reason, r.job.Node = j.State, j.Reason, j.Node
		r.seen, r.missing = now, 0
	}
	var ended []*runnerState
	for id, r := range d.runners {
		if _, ok := jobs[id]; !ok {
			// Not listed: purged after MinJobAge (missed by slow polls)
			// or not listed yet; give it a few polls.
			if r.missing++; r.missing >= 3 && now.Sub(r.submitted) > 3*d.cfg.Poll {
				r.State = "GONE"
			}
		}
		if final(r.State) {
			ended = append(ended, r)
			d.gone[id] = true
			delete(d.runners, id)
		}
	}
	for id := range d.gone {
		if _, ok := jobs[id]; !ok {
			delete(d.gone, id) // squeue forgot it too
		}
	}
	return ended
}

// endClaims ends the attempts a runner that ended still held: by their
// end markers if they have them, else with the runner's state.
func (d *Dispatcher) endClaims(r *runnerState) {
	for _, t := range names(r.build.claimed(r.ID)) {
		m, ok, _ := r.build.readMarker(t)
		d.mu.Lock()
		if at := d.live[t]; at != nil {
			e := pipeline.Ended{State: r.State, Log: d.logOf(r.ID), Detail: fmt.Sprintf("its runner job %s ended %s on %s while it ran", r.ID, r.State, r.Node)}
			if ok {
				e = pipeline.Ended{State: m.State, Detail: m.Detail, Log: d.logOf(r.ID)}
				os.Remove(r.build.ended(t))
			}
			d.finish(at, e, nil)
			d.progress = time.Now()
		}
		d.mu.Unlock()
	}
	os.RemoveAll(r.build.claimed(r.ID))
	d.mu.Lock()
	for spec, c := range d.adoptable {
		if c.runner == r.ID {
			delete(d.adoptable, spec)
		}
	}
	d.mu.Unlock()
}

// lookAtClaims learns which runner holds which attempt, which runners are
// idle, and which attempts' files grew: signs of life and progress.
func (d *Dispatcher) lookAtClaims(now time.Time) {
	d.mu.Lock()
	type runnerRef struct {
		id string
		b  buildDir
	}
	var rs []runnerRef
	for id, r := range d.runners {
		if started(r.State) {
			rs = append(rs, runnerRef{id, r.build})
		}
	}
	d.mu.Unlock()
	holds := map[string]string{} // ticket → runner
	busy := map[string]bool{}
	for _, r := range rs {
		for _, t := range names(r.b.claimed(r.id)) {
			holds[t] = r.id
			busy[r.id] = true
		}
	}
	d.mu.Lock()
	var files []*attempt
	for id, r := range d.runners {
		r.idle = started(r.State) && !busy[id]
	}
	for t, at := range d.live {
		if id, ok := holds[t]; ok {
			if at.runner != id {
				at.runner, at.sign, d.progress = id, now, now
			}
			files = append(files, at)
		}
	}
	d.mu.Unlock()
	for _, at := range files {
		fi, err := os.Stat(strings.TrimSuffix(at.a.Spec, ".spec.json") + ".attempt")
		if err != nil {
			continue
		}
		d.mu.Lock()
		if fi.Size() != at.size {
			at.size, at.sign, d.progress = fi.Size(), now, now
		}
		d.mu.Unlock()
	}
}

// judge reports the runners' states when some are pending, and decides
// what cannot progress: the attempts to stop and the runners to cancel
// (d.mu held). Surplus pending runners (the queue empty for 5 s) are
// cancelled; runners that can never start (a hopeless pending reason)
// and a run without progress for StallAfter fail the attempts in flight
// and every later one.
func (d *Dispatcher) judge(now time.Time) (cancel []string, stuck []*attempt) {
	var rs, pendingRs []*runnerState
	running := 0
	for _, r := range d.runners {
		rs = append(rs, r)
		if r.build != d.build {
			continue
		}
		if started(r.State) {
			running++
		} else {
			pendingRs = append(pendingRs, r)
		}
	}
	slices.SortFunc(rs, func(a, b *runnerState) int { return strings.Compare(a.ID, b.ID) })
	text, key := summary(rs, now)
	queued := 0
	for _, at := range d.live {
		if at.runner == "" {
			queued++
		}
	}
	oldPending := false
	for _, r := range pendingRs {
		oldPending = oldPending || now.Sub(r.submitted) > 5*time.Second
	}
	if oldPending && (key != d.said || now.Sub(d.saidAt) > 30*time.Second) {
		d.cfg.Log("runner jobs: %s; %d attempt(s) waiting for a runner", text, queued)
		d.said, d.saidAt = key, now
	}
	if now.Sub(d.queuedAt) > 5*time.Second { // the queue has been empty for 5 s
		for _, r := range pendingRs {
			if !r.cancelled {
				r.cancelled = true
				cancel = append(cancel, r.ID)
			}
		}
	}
	var why error
	if hopelessAll(pendingRs, running) {
		why = fmt.Errorf("%w: the runner jobs can never start: %s; each asks for --cpus-per-task %d%s%s: ask for what the partition has (sinfo -o '%%P %%c %%m %%l'), or correct --slurm-args",
			ErrStalled, text, d.cfg.CPUs, optional(" --mem ", d.cfg.Mem), optional(" --time ", d.cfg.Time))
	} else if len(d.live) > 0 && now.Sub(d.progress) > d.cfg.StallAfter {
		why = fmt.Errorf("%w: nothing progressed for %s (--slurm-stall %s): %d attempt(s) in flight, %d waiting for a runner; runner jobs: %s",
			ErrStalled, now.Sub(d.progress).Round(time.Second), d.cfg.StallAfter, len(d.live), queued, text)
	}
	if why == nil {
		return cancel, nil
	}
	d.halt = why
	d.cfg.Log("%s", strings.TrimPrefix(why.Error(), "slurm: "))
	for _, at := range d.live {
		stuck = append(stuck, at)
		d.finish(at, pipeline.Ended{}, why)
	}
	for _, r := range pendingRs {
		if !r.cancelled {
			r.cancelled = true
			cancel = append(cancel, r.ID)
		}
	}
	return cancel, stuck
}

// hopelessAll reports whether no runner runs and every pending one waits
// for a reason that does not pass by itself.
func hopelessAll(pending []*runnerState, running int) bool {
	if running > 0 || len(pending) == 0 {
		return false
	}
	for _, r := range pending {
		if !isHopeless(r.Reason) {
			return false
		}
	}
	return true
}

func optional(prefix, v string) string {
	if v == "" {
		return ""
	}
	return prefix + v
}
