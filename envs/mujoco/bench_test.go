//go:build mujoco

package mujoco

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkEnvSteps compares the environment's step rate with the raw
// mj_step rate, measured side by side: each op runs one Rollout of H steps
// (zero policy) from reset i, then, on a Sim reset the same way (not
// timed), H·FrameSkip bare mj_step calls (zero control, so the same
// trajectory). Metrics: env_steps/s, mj_steps/s inside rollouts and raw,
// and their ratio in percent (target ≥ 85). The rollout time includes
// everything an episode costs: cgo call, reset noise, reset, the policy,
// observations, rewards and checks.
func BenchmarkEnvSteps(b *testing.B) {
	for _, name := range ownNames() {
		for _, h := range []int{15, 1000} {
			b.Run(fmt.Sprintf("%s/H=%d", name, h), func(b *testing.B) {
				m := open(b, name)
				s := newSim(b, m)
				fs := m.spec.FrameSkip
				W := make([]float64, m.ActDim()*m.ObsDim())
				var tEnv, tRaw time.Duration
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					tEnv += timedRollout(b, m, W, h, i)
					if err := s.Reset(rand.New(rand.NewPCG(uint64(i), 0))); err != nil {
						b.Fatal(err)
					}
					t2 := time.Now()
					if err := s.rawSteps(h * fs); err != nil {
						b.Fatal(err)
					}
					tRaw += time.Since(t2)
				}
				steps := float64(b.N * h)
				envRate := steps / tEnv.Seconds()
				rawRate := steps * float64(fs) / tRaw.Seconds()
				b.ReportMetric(envRate, "env_steps/s")
				b.ReportMetric(envRate*float64(fs), "mj_steps/s_env")
				b.ReportMetric(rawRate, "mj_steps/s_raw")
				b.ReportMetric(100*envRate*float64(fs)/rawRate, "%_of_raw")
			})
		}
	}
}

// cpuTime returns the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRolloutsParallel measures rollouts/s of H = 15 episodes with 1
// worker goroutine and with 2, measured side by side: each op runs a batch
// of 20 rollouts on one worker, then another batch of 20 shared by two
// workers taking the next index from a counter (as the task's worker pool
// does). Metrics: rollouts/s for both and the wall-clock speedup (target ≥
// 1.8 on 2 idle cores), and the process CPU time per rollout in both
// phases with the speedup they imply on two free cores (cpu_speedup):
// equal CPU times mean the rollouts do not contend, so the wall-clock
// speedup is then limited only by the cores actually free, which on a
// shared machine understates the scaling.
func BenchmarkRolloutsParallel(b *testing.B) {
	if runtime.GOMAXPROCS(0) < 2 {
		b.Skip("GOMAXPROCS < 2")
	}
	const h, batch = 15, 20
	for _, name := range ownNames() {
		b.Run(name, func(b *testing.B) {
			m := open(b, name)
			W := randW(m, 0.1, 1)
			run := func(workers int, base uint64) {
				var next atomic.Int64
				var wg sync.WaitGroup
				for g := 0; g < workers; g++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := next.Add(1) - 1; i < batch; i = next.Add(1) - 1 {
							if _, err := m.Rollout(rand.New(rand.NewPCG(base+uint64(i), 0)), W, h, -1, nil, nil); err != nil {
								b.Error(err)
							}
						}
					}()
				}
				wg.Wait()
			}
			run(2, 0) // two mjData in the free list
			var t1, t2, c1, c2 time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				base := uint64(i * batch)
				t0, u0 := time.Now(), cpuTime()
				run(1, base)
				tm, um := time.Now(), cpuTime()
				run(2, base)
				t1 += tm.Sub(t0)
				t2 += time.Since(tm)
				c1 += um - u0
				c2 += cpuTime() - um
			}
			n := float64(batch * b.N)
			r1, r2 := n/t1.Seconds(), n/t2.Seconds()
			b.ReportMetric(r1, "rollouts/s_1g")
			b.ReportMetric(r2, "rollouts/s_2g")
			b.ReportMetric(r2/r1, "speedup")
			b.ReportMetric(float64(c1.Microseconds())/n, "cpu_µs/rollout_1g")
			b.ReportMetric(float64(c2.Microseconds())/n, "cpu_µs/rollout_2g")
			// The speedup on two free cores: 2 × (CPU per rollout alone) /
			// (CPU per rollout beside another).
			b.ReportMetric(2*c1.Seconds()/c2.Seconds(), "cpu_speedup")
		})
	}
}

// timedRollout times one rollout of W over h steps from reset stream i.
func timedRollout(b *testing.B, m *Model, W []float64, h, i int) time.Duration {
	t0 := time.Now()
	if _, err := m.Rollout(rand.New(rand.NewPCG(uint64(i), 0)), W, h, -1, nil, nil); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

// BenchmarkDataAlloc compares the two ways of giving each rollout an
// mjData, measured side by side: the free list of Rollout (fast reset) and
// mj_makeData/mj_deleteData around every episode (mj_makeData runs
// mj_resetData, zeroing the ~3.2 MB buffer). Metrics: µs per episode each.
func BenchmarkDataAlloc(b *testing.B) {
	for _, name := range ownNames() {
		for _, h := range []int{1, 15} {
			b.Run(fmt.Sprintf("%s/H=%d", name, h), func(b *testing.B) {
				m := open(b, name)
				W := randW(m, 0.1, 1)
				var tPool, tFresh time.Duration
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					tPool += timedRollout(b, m, W, h, i)
					t1 := time.Now()
					if _, err := m.freshRollout(resetFast, rand.New(rand.NewPCG(uint64(i), 0)), W, h, -1, nil, nil); err != nil {
						b.Fatal(err)
					}
					tFresh += time.Since(t1)
				}
				b.ReportMetric(float64(tPool.Microseconds())/float64(b.N), "µs/ep_pool")
				b.ReportMetric(float64(tFresh.Microseconds())/float64(b.N), "µs/ep_makedata")
			})
		}
	}
}

// BenchmarkFixedPolicyReturn measures the mean return of fixed policies
// over fixed reset seeds: W = 0 and W with N(0, 0.1²) entries drawn from
// seed 7, 100 episodes each (reset streams 1..100), at H = 15 and
// H = 1000. Run it before and after a change to the models or to MuJoCo's
// settings to see how much the change moves the dynamics (the notes in
// assets/*.xml quote it). Metrics: return/<env>/H<h>/<policy>.
func BenchmarkFixedPolicyReturn(b *testing.B) {
	for i := 0; i < b.N; i++ {
		for _, name := range []string{Swimmer, HalfCheetah} {
			m, err := Open(name)
			if err != nil {
				b.Fatal(err)
			}
			w := make([]float64, m.ActDim()*m.ObsDim())
			src := rand.New(rand.NewPCG(7, 0))
			for j := range w {
				w[j] = 0.1 * src.NormFloat64()
			}
			for _, h := range []int{15, 1000} {
				for _, pol := range []struct {
					name string
					W    []float64
				}{{"zero", make([]float64, len(w))}, {"random", w}} {
					sum := 0.0
					for ep := uint64(1); ep <= 100; ep++ {
						r, err := m.Rollout(rand.New(rand.NewPCG(ep, 0)), pol.W, h, -1, nil, nil)
						if err != nil {
							b.Fatal(err)
						}
						sum += r
					}
					b.ReportMetric(sum/100, fmt.Sprintf("return/%s/H%d/%s", name, h, pol.name))
				}
			}
		}
	}
}
