package pipeline

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLockstepSharesOnceInTurns drives a lockstep as a cohort does:
// members of different lengths ask for one value per iteration, one never
// asks (a cached task) and one leaves after failing half way. Every value
// is made once, every member gets every value of its iterations, at most
// one member computes at a time and at most one value is held.
func TestLockstepSharesOnceInTurns(t *testing.T) {
	lengths := []int{50, 20, 50, 0, 35, 7}
	l := newLockstep(len(lengths))
	var made sync.Map
	var makes, computing, maxComputing, maxHeld atomic.Int64
	bump := func(max *atomic.Int64, v int64) {
		for {
			old := max.Load()
			if v <= old || max.CompareAndSwap(old, v) {
				return
			}
		}
	}
	got := make([][]int, len(lengths))
	var wg sync.WaitGroup
	for id, n := range lengths {
		m := l.member(id)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer m.leave()
			time.Sleep(time.Duration(id) * time.Millisecond) // members join in any order
			for it := 0; it < n; it++ {
				if it > 0 {
					computing.Add(-1)
				}
				v := m.Share(fmt.Sprint("batch ", it), func() any {
					if _, dup := made.LoadOrStore(it, true); dup {
						t.Errorf("value %d made twice", it)
					}
					makes.Add(1)
					return it
				}).(int)
				bump(&maxComputing, computing.Add(1))
				l.mu.Lock()
				bump(&maxHeld, int64(len(l.values)))
				l.mu.Unlock()
				got[id] = append(got[id], v)
				if id == 5 && it == 6 { // fails half way: leaves without another Share
					computing.Add(-1)
					return
				}
			}
			if n > 0 {
				computing.Add(-1)
			}
		}()
	}
	wg.Wait()
	if makes.Load() != 50 {
		t.Errorf("%d values made, want 50 (one per iteration)", makes.Load())
	}
	for id, n := range lengths {
		for it := 0; it < n && it < len(got[id]); it++ {
			if got[id][it] != it {
				t.Fatalf("member %d got %d at iteration %d", id, got[id][it], it)
			}
		}
	}
	if maxComputing.Load() != 1 {
		t.Errorf("%d members computed at once, want 1", maxComputing.Load())
	}
	if maxHeld.Load() != 1 {
		t.Errorf("%d values held at once, want 1", maxHeld.Load())
	}
	if len(l.values) != 0 || len(l.ring) != 0 || l.pending != 0 {
		t.Errorf("after every member left: %d values, ring %v, %d pending", len(l.values), l.ring, l.pending)
	}
}

// TestLockstepAloneMember: a cohort of one member never waits.
func TestLockstepAloneMember(t *testing.T) {
	l := newLockstep(1)
	m := l.member(0)
	for it := 0; it < 3; it++ {
		if v := m.Share(fmt.Sprint(it), func() any { return it * 2 }).(int); v != it*2 {
			t.Fatalf("got %d", v)
		}
	}
	m.leave()
	m.leave() // idempotent
	if len(l.values) != 0 {
		t.Errorf("%d values held after leaving", len(l.values))
	}
}
