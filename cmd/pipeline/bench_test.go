package main

import (
	"bufio"
	"flag"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkNoopSmokeRun times `pipeline run --profile smoke` after a full
// run of the same profile: planning, identity, cache verification and
// figure export with nothing to execute (target: well under 1 s).
func BenchmarkNoopSmokeRun(b *testing.B) {
	bin := binary(b)
	root := repoRoot(b)
	dir := b.TempDir()
	args := []string{"run", "--dag", filepath.Join(root, "dag.yaml"), "--profile", "smoke", "--store", filepath.Join(dir, "store"), "--figures", filepath.Join(dir, "fig")}
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		b.Fatalf("full run: %v\n%s", err, out)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			b.Fatalf("no-op run: %v\n%s", err, out)
		}
	}
}

var (
	serveProfile = flag.String("serve.profile", "smoke", "the profile BenchmarkServeOverhead runs")
	servePairs   = flag.Int("serve.pairs", 7, "the pairs of runs BenchmarkServeOverhead times")
)

// BenchmarkServeOverhead measures what watching a run costs it: it runs
// the profile (-serve.profile, smoke by default; quick for the issue's
// second figure) into fresh stores -serve.pairs times in pairs, in turn
// alone and with --serve and 20 clients that each load the overview and
// its stylesheet every second, as a browser's refresh does. It reports the
// median of the paired wall-time ratios (with/alone) as "ratio", and of the
// paired CPU-time ratios as "cpu-ratio": the run process's user and system
// time, and when watched the clients' (this process's) too. On two cores
// the run keeps busy, the CPU time is what the server and its clients take
// from the run; the wall time adds the machine's noise. Give the machine
// to it alone (the wall ratios of a shared machine spread by ±8%):
//
//	go test -tags "mujoco openblas" -run '^$' -bench ServeOverhead -benchtime 1x ./cmd/pipeline/
//	go test ... -bench ServeOverhead -benchtime 1x ./cmd/pipeline/ -args -serve.profile=quick -serve.pairs=3
func BenchmarkServeOverhead(b *testing.B) {
	bin, root := binary(b), repoRoot(b)
	// cpu is this process's user and system time: the clients'.
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	run := func(clients int) (wall, used time.Duration) {
		dir := b.TempDir()
		args := []string{"run", "--dag", filepath.Join(root, "dag.yaml"), "--profile", *serveProfile, "--jobs", "2",
			"--store", filepath.Join(dir, "store"), "--figures", filepath.Join(dir, "fig")}
		if clients > 0 {
			args = append(args, "--serve", "127.0.0.1:0")
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = root
		stderr, _ := cmd.StderrPipe()
		var log strings.Builder
		start, self := time.Now(), cpu()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`serving (http://\S+)/`)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			m := re.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			for c := 0; c < clients; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// Staggered, as browsers opened one after another.
					t := time.NewTimer(time.Duration(c) * 50 * time.Millisecond)
					for {
						select {
						case <-stop:
							return
						case <-t.C:
						}
						for _, p := range []string{"/", "/static/style.css"} {
							if resp, err := http.Get(m[1] + p); err == nil {
								io.Copy(io.Discard, resp.Body)
								resp.Body.Close()
							}
						}
						t.Reset(time.Second)
					}
				}()
			}
			break
		}
		rest := make(chan struct{})
		go func() {
			for sc.Scan() {
				log.WriteString(sc.Text() + "\n")
			}
			close(rest)
		}()
		<-rest
		err := cmd.Wait()
		wall = time.Since(start)
		close(stop)
		wg.Wait()
		if err != nil {
			b.Fatalf("run %v: %v\n%s", args, err, log.String())
		}
		return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime() + cpu() - self
	}
	var ratios, cpuRatios []float64
	var alone, watched time.Duration
	for i := 0; i < *servePairs; i++ {
		a, ac := run(0)
		w, wc := run(20)
		alone, watched = alone+a, watched+w
		ratios = append(ratios, w.Seconds()/a.Seconds())
		cpuRatios = append(cpuRatios, wc.Seconds()/ac.Seconds())
		b.Logf("pair %d: alone %v (CPU %v), with 20 clients %v (CPU %v, clients included), wall ratio %.4f, CPU ratio %.4f",
			i+1, a.Round(time.Millisecond), ac.Round(time.Millisecond), w.Round(time.Millisecond), wc.Round(time.Millisecond), ratios[i], cpuRatios[i])
	}
	slices.Sort(ratios)
	slices.Sort(cpuRatios)
	b.ReportMetric(ratios[len(ratios)/2], "ratio")
	b.ReportMetric(cpuRatios[len(cpuRatios)/2], "cpu-ratio")
	b.ReportMetric(alone.Seconds()/float64(*servePairs), "s-alone/op")
	b.ReportMetric(watched.Seconds()/float64(*servePairs), "s-watched/op")
}
