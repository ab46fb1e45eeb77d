package pipeline

import (
	"slices"
	"sync"
	"time"

	"zorepro/pipeline/dag"
	"zorepro/pipeline/task"
)

// A cohort is a set of ready tasks whose runners report the same
// task.Cohort key (the tuning trials of one seed, which draw the same data
// batches): the loop starts them together on one worker token, and they
// share values through a lockstep (task.Sharer). Each member is executed as
// any task is (its own identity, cache check, events, output); only the
// values it takes through Share are computed once for all. A task run by a
// Dispatcher, or through RunOne, runs alone and computes them itself.

// cohortKey returns the cohort key of t's runner ("" for none).
func cohortKey(t *dag.Task) string {
	if c, ok := t.Runner.(task.Cohort); ok {
		return c.CohortKey()
	}
	return ""
}

// takeCohort removes from the ready queue every task of the cohort key and
// returns them, in index order.
func (g *graph) takeCohort(key string) []*dag.Task {
	var out []*dag.Task
	g.ready = slices.DeleteFunc(g.ready, func(t *dag.Task) bool {
		if cohortKey(t) == key {
			out = append(out, t)
			return true
		}
		return false
	})
	return out
}

// startCohort runs the tasks of one cohort (more than one) on one worker
// token: each on a goroutine of its own, taking turns through a lockstep.
// Their outcomes are reported together when the last has ended; the last
// one reported releases the token.
func (r *runner) startCohort(ts []*dag.Task) {
	l := newLockstep(len(ts))
	outs := make([]outcome, len(ts))
	var wg sync.WaitGroup
	for i, t := range ts {
		r.state[t.Index] = running
		deps := map[string]string{}
		for _, d := range t.Deps {
			deps[d.Path] = r.outputs[d.Path]
		}
		m := l.member(i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer m.leave()
			outs[i] = r.executeShared(t, deps, m)
		}()
	}
	go func() {
		wg.Wait()
		for i, o := range outs {
			o.release = i == len(outs)-1
			select {
			case r.results <- o:
			case <-r.abandoned:
				return
			}
		}
	}()
}

// lockstep is the task.Sharer of one cohort. Its members take turns: the
// member holding the turn computes until its next Share or its end, then
// the turn passes to the next member in the ring (the members that have
// called Share and not yet left, in the order they first did). No member
// computes past its first Share until every live member has called Share
// or left, so a value made for iteration i is taken by all before anyone
// asks for i+1's: memory stays at one value per key in flight, and the
// cohort uses one core.
type lockstep struct {
	mu      sync.Mutex
	cond    *sync.Cond
	pending int   // live members that have not called Share yet
	ring    []int // joined live members, in turn order
	turn    int   // index in ring of the member whose turn it is
	live    map[int]bool
	values  map[string]*sharedValue
}

type sharedValue struct {
	v     any
	taken map[int]bool
}

func newLockstep(n int) *lockstep {
	l := &lockstep{pending: n, live: map[int]bool{}, values: map[string]*sharedValue{}}
	for i := 0; i < n; i++ {
		l.live[i] = true
	}
	l.cond = sync.NewCond(&l.mu)
	return l
}

// member is one task's view of its cohort's lockstep (its task.Sharer).
type member struct {
	l      *lockstep
	id     int
	joined bool
	left   bool
	waited time.Duration // time spent waiting for turns
}

func (l *lockstep) member(id int) *member { return &member{l: l, id: id} }

var _ task.Sharer = (*member)(nil)

// Share implements task.Sharer.
func (m *member) Share(key string, make func() any) any {
	l := m.l
	l.mu.Lock()
	if !m.joined {
		m.joined = true
		l.pending--
		l.ring = append(l.ring, m.id)
	} else if len(l.ring) > 0 && l.ring[l.turn] == m.id {
		l.turn = (l.turn + 1) % len(l.ring)
	}
	l.cond.Broadcast()
	t0 := time.Now()
	for l.pending > 0 || l.ring[l.turn] != m.id {
		l.cond.Wait()
	}
	m.waited += time.Since(t0)
	sv := l.values[key]
	if sv == nil {
		l.mu.Unlock()
		v := make() // only the member holding the turn runs: no other Share proceeds
		l.mu.Lock()
		sv = &sharedValue{v: v, taken: map[int]bool{}}
		l.values[key] = sv
	}
	sv.taken[m.id] = true
	l.collect()
	l.mu.Unlock()
	return sv.v
}

// leave ends the member's part in the lockstep: its turn passes on and the
// values only it had still to take are dropped.
func (m *member) leave() {
	l := m.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if m.left {
		return
	}
	m.left = true
	delete(l.live, m.id)
	if !m.joined {
		l.pending--
	} else {
		i := slices.Index(l.ring, m.id)
		l.ring = slices.Delete(l.ring, i, i+1)
		switch {
		case len(l.ring) == 0:
			l.turn = 0
		case i < l.turn:
			l.turn--
		case l.turn >= len(l.ring):
			l.turn = 0
		}
	}
	l.collect()
	l.cond.Broadcast()
}

// collect drops every value that all live members have taken.
func (l *lockstep) collect() {
	for k, sv := range l.values {
		all := true
		for id := range l.live {
			if !sv.taken[id] {
				all = false
				break
			}
		}
		if all {
			delete(l.values, k)
		}
	}
}

// Waited returns how long the member has waited for its turns.
func (m *member) Waited() time.Duration {
	m.l.mu.Lock()
	defer m.l.mu.Unlock()
	return m.waited
}
