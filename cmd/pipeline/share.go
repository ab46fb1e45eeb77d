package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/codeid"
	"zorepro/pipeline/events"
	"zorepro/pipeline/remote"
)

// sharer is run --remote's side of a shared cache: it pulls what the
// plan would reuse before the run and pushes each task's result as it
// finishes (every few seconds, the tasks that finished since), so that a
// cluster run and a laptop share results.
type sharer struct {
	ctx    context.Context
	eng    *pipeline.Engine
	b      remote.Backend
	about  remote.Pushed
	log    io.Writer
	before map[string]string // task → output recorded before the run
	pushed map[string]bool   // task\x00output pushed
	stop   chan struct{}
	done   sync.WaitGroup
	errMu  sync.Mutex
	err    error
}

// shareEvery is how often a run --remote pushes what finished.
const shareEvery = 5 * time.Second

// share pulls the plan's reusable results from c.remote and starts
// pushing; finish stops it after a last push.
func (c *runCmd) share(inv *invocation, eng *pipeline.Engine) (*sharer, error) {
	b, err := openRemote(inv.ctx, c.remote)
	if err != nil {
		return nil, err
	}
	sum, err := remote.Pull(inv.ctx, eng, b, remote.PullOptions{Info: map[string]any{"args": []string{"run", "--remote", c.remote}}})
	if err != nil {
		return nil, fmt.Errorf("run --remote: pulling from %s: %w", b, err)
	}
	fmt.Fprintf(inv.stderr, "remote %s: pulled %d tasks the plan reuses (%s fetched); %d were here, %d are not on the remote\n",
		b, len(sum.Pulled), bytesText(sum.FetchedBytes), len(sum.Present), len(sum.Missing))
	s := &sharer{ctx: inv.ctx, eng: eng, b: b, log: inv.stderr, before: map[string]string{}, pushed: map[string]bool{}, stop: make(chan struct{}),
		about: remote.Pushed{Revision: readVersion().Revision, Code: codeid.Stamp, Profile: c.profile, Targets: c.targets}}
	if strings.HasPrefix(c.remote, "http://") || strings.HasPrefix(c.remote, "https://") {
		fmt.Fprintf(inv.stderr, "remote %s is a static web host (read-only): this run's results are not pushed\n", b)
		return nil, nil
	}
	states, err := eng.Events.LastStates()
	if err != nil {
		return nil, err
	}
	for _, st := range states {
		s.before[st.Task] = st.Output
	}
	s.done.Add(1)
	go s.loop()
	return s, nil
}

func (s *sharer) loop() {
	defer s.done.Done()
	t := time.NewTicker(shareEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			if err := s.pushFinished(s.ctx); err != nil {
				s.errMu.Lock()
				if s.err == nil {
					s.err = err
					fmt.Fprintf(s.log, "remote %s: push: %v (the run goes on; results stay recorded here)\n", s.b, err)
				}
				s.errMu.Unlock()
			}
		}
	}
}

// pushFinished pushes the plan's tasks that finished since the run
// started and are not pushed yet.
func (s *sharer) pushFinished(ctx context.Context) error {
	states, err := s.eng.Events.LastStates()
	if err != nil {
		return err
	}
	var outs []remote.TaskOutput
	for _, st := range states {
		key := st.Task + "\x00" + st.Output
		if st.State != events.StateDone || st.Output == "" || s.before[st.Task] == st.Output || s.pushed[key] || s.eng.Plan.Task(st.Task) == nil {
			continue
		}
		outs = append(outs, remote.TaskOutput{Task: st.Task, Output: st.Output})
	}
	if len(outs) == 0 {
		return nil
	}
	if _, err := remote.PushOutputs(ctx, s.eng, s.b, outs, remote.PushOptions{About: s.about}); err != nil {
		return err
	}
	for _, o := range outs {
		s.pushed[o.Task+"\x00"+o.Output] = true
	}
	return nil
}

// finish stops the pushing and pushes what finished last (also after an
// interrupted run: what finished is whole).
func (s *sharer) finish() error {
	if s == nil {
		return nil
	}
	close(s.stop)
	s.done.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if s.ctx.Err() != nil {
		ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second) // interrupted: a short last push
		defer cancel()
	}
	if err := s.pushFinished(ctx); err != nil {
		return fmt.Errorf("run --remote: the last push to %s: %w (results are recorded here; pipeline push --to %s completes it)", s.b, err, s.b)
	}
	fmt.Fprintf(s.log, "remote %s: pushed %d task results of this run\n", s.b, len(s.pushed))
	return nil
}
