package slurm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"zorepro/pipeline"
)

// runnerPollMax is the longest an idle runner waits before it looks at the
// queue again.
const runnerPollMax = 250 * time.Millisecond

// Worker runs one attempt from its spec file, recording it in the
// attempt file the spec names: what a runner does with each attempt it
// takes (cmd/pipeline's worker, through Engine.Work). Its error is the
// task's failure, pipeline.ErrInterrupted (wrapped) if ctx ended first,
// or pipeline.ErrRefused (wrapped) if its action ID differs here.
type Worker interface {
	Work(ctx context.Context, spec string) error
}

// RunnerConfig is one runner job's setting.
type RunnerConfig struct {
	Build string        // the build directory it serves (<store>/slurm/runs/<build>)
	ID    string        // "<job>_<index>" (RunnerID)
	Idle  time.Duration // it exits after this long without an attempt (0: 20s)
	Log   io.Writer     // one line per attempt (nil: discard)
}

// RunnerID names this job as its coordinator does, from Slurm's
// environment: "<array job>_<index>".
func RunnerID() (string, error) {
	job, idx := os.Getenv("SLURM_ARRAY_JOB_ID"), os.Getenv("SLURM_ARRAY_TASK_ID")
	if job == "" || idx == "" {
		return "", errors.New("worker --runner: SLURM_ARRAY_JOB_ID and SLURM_ARRAY_TASK_ID are unset: a runner is started by `pipeline run --executor slurm` as an element of a job array")
	}
	return job + "_" + idx, nil
}

// Serve takes attempts from the build's queue, oldest first, and runs them
// one after another through w, writing each one's end marker, until none
// has come for cfg.Idle or ctx ends (scancel, a time limit: the attempt in
// hand is interrupted, its latest checkpoint recorded). An attempt whose
// cancel request appears while it runs is interrupted the same way. A
// runner that Slurm requeued (although runners are submitted with
// --no-requeue) first ends what its earlier incarnation had taken, as
// REQUEUED, so that one task never has two live attempts.
func Serve(ctx context.Context, cfg RunnerConfig, w Worker) error {
	if cfg.Idle <= 0 {
		cfg.Idle = 20 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	b := buildDir(cfg.Build)
	mine := b.claimed(cfg.ID)
	if err := os.MkdirAll(mine, 0o755); err != nil {
		return fmt.Errorf("runner %s: %w", cfg.ID, err)
	}
	node, _ := os.Hostname()
	for _, t := range names(mine) {
		now := time.Now().UnixNano()
		b.writeMarker(t, marker{State: stateRequeued, Runner: cfg.ID, Node: node, Began: now, Ended: now,
			Detail: "its runner job was requeued by Slurm while the attempt ran"})
		os.Remove(filepath.Join(mine, t))
	}
	fmt.Fprintf(cfg.Log, "runner %s on %s: serving %s\n", cfg.ID, node, cfg.Build)
	idleSince := time.Now()
	wait := 20 * time.Millisecond
	for ctx.Err() == nil {
		ticket, spec := claim(b, mine)
		if ticket == "" {
			if time.Since(idleSince) > cfg.Idle {
				fmt.Fprintf(cfg.Log, "runner %s: no attempt for %s; exiting\n", cfg.ID, cfg.Idle)
				return nil
			}
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
			wait = min(2*wait, runnerPollMax)
			continue
		}
		m := runOne(ctx, b, ticket, spec, w, cfg.Log)
		m.Runner, m.Node, m.Free = cfg.ID, node, idleSince.UnixNano()
		if err := b.writeMarker(ticket, m); err != nil {
			return fmt.Errorf("runner %s: %w", cfg.ID, err)
		}
		os.Remove(filepath.Join(mine, ticket))
		os.Remove(b.cancel(ticket))
		idleSince, wait = time.Now(), 20*time.Millisecond
	}
	return ctx.Err()
}

// claim moves the oldest ticket of the queue into dir and returns it with
// the spec path it names ("" if the queue is empty).
func claim(b buildDir, dir string) (ticket, spec string) {
	for _, t := range names(b.queue()) {
		if os.Rename(filepath.Join(b.queue(), t), filepath.Join(dir, t)) != nil {
			continue // another runner took it, or the coordinator withdrew it
		}
		data, err := os.ReadFile(filepath.Join(dir, t))
		if err != nil {
			return t, ""
		}
		return t, strings.TrimSpace(string(data))
	}
	return "", ""
}

// runOne runs one claimed attempt and returns its end marker (without the
// runner's name and node).
func runOne(ctx context.Context, b buildDir, ticket, spec string, w Worker, log io.Writer) marker {
	began := time.Now()
	m := marker{Began: began.UnixNano()}
	if _, err := os.Stat(b.cancel(ticket)); err == nil {
		m.State, m.Ended = stateCancelled, time.Now().UnixNano()
		return m
	}
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cancelled := make(chan struct{})
	go func() { // the coordinator's cancel request stops the attempt
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tctx.Done():
				return
			case <-tick.C:
				if _, err := os.Stat(b.cancel(ticket)); err == nil {
					close(cancelled)
					cancel()
					return
				}
			}
		}
	}()
	fmt.Fprintf(log, "attempt %s: %s\n", ticket, spec)
	err := w.Work(tctx, spec)
	cancel()
	switch {
	case err == nil:
		m.State = stateCompleted
	case errors.Is(err, pipeline.ErrRefused):
		m.State, m.Detail = pipeline.Refused, err.Error()
	case errors.Is(err, pipeline.ErrInterrupted):
		m.State = stateInterrupted
		select {
		case <-cancelled:
			m.State = stateCancelled
		default:
		}
	default:
		m.State, m.Detail = stateFailed, err.Error()
	}
	fmt.Fprintf(log, "attempt %s: %s in %s%s\n", ticket, m.State, time.Since(began).Round(time.Millisecond), detailOf(m.Detail))
	m.Ended = time.Now().UnixNano()
	return m
}

func detailOf(d string) string {
	if d == "" {
		return ""
	}
	return ": " + d
}
