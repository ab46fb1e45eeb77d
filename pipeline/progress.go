package pipeline

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// progress shows what a run is doing: a redrawn bar on a terminal, plain
// lines in a pipe. Wall-clock time is used for display only.
type progress struct {
	mu       sync.Mutex
	out      io.Writer
	term     bool
	total    int
	finished int
	counts   map[string]int
	start    time.Time
	running  map[string][2]int64
	lastDraw time.Time
	// cachedRun counts cached tasks not yet reported: in a pipe they are
	// summed into one line, printed before the next line or at the end.
	cachedRun int
	// The time left is the work left at the pace of the work done: work
	// is each task's weight (its predicted time, Options.Predicted; the
	// mean of those where it has none), a cached task's leaves the total,
	// and a running task counts by its samples against its budget. The
	// count of tasks alone would say seconds are left when a resumed run
	// has found most of its tasks cached, and a plot weighs nothing
	// against a tuning trial.
	weight        map[string]float64
	totalW, doneW float64
	executed      int       // tasks that ended having executed (done, failed, interrupted)
	lastLine      time.Time // of the latest time-left line (in a pipe)
	lineEvery     time.Duration
}

// leftEvery is how often a run in a pipe prints how much is left.
const leftEvery = 10 * time.Minute

func newProgress(out io.Writer, term bool, total int) *progress {
	if out == nil {
		out = io.Discard
	}
	now := time.Now()
	return &progress{out: out, term: term, total: total, counts: map[string]int{}, start: now, running: map[string][2]int64{},
		weight: map[string]float64{}, lastLine: now, lineEvery: leftEvery}
}

// weigh sets each task's weight for the time left: its predicted time in
// seconds, or the mean of the predicted ones where it has none (1 s each
// when none has).
func (p *progress) weigh(paths []string, predicted map[string]time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var sum float64
	n := 0
	for _, path := range paths {
		if d, ok := predicted[path]; ok {
			sum += d.Seconds()
			n++
		}
	}
	mean := 1.0
	if n > 0 && sum > 0 {
		mean = sum / float64(n)
	}
	p.totalW, p.doneW = 0, 0
	for _, path := range paths {
		w := mean
		if d, ok := predicted[path]; ok {
			w = d.Seconds()
		}
		p.weight[path] = w
		p.totalW += w
	}
}

// left is the time left at the pace of the work done so far, and whether
// there is a pace yet (some work done).
func (p *progress) left(now time.Time) (time.Duration, bool) {
	done := p.doneW
	for path, v := range p.running {
		if v[1] > 0 {
			done += p.weight[path] * min(float64(v[0])/float64(v[1]), 1)
		}
	}
	if done <= 0 || p.totalW <= 0 {
		return 0, false
	}
	pace := float64(now.Sub(p.start)) / done
	return time.Duration(max(p.totalW-done, 0) * pace).Round(time.Second), true
}

func (p *progress) event(what, path string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch what {
	case "start":
		p.running[path] = [2]int64{}
		if !p.term {
			p.flushCached()
			fmt.Fprintf(p.out, "start    %s\n", path)
		}
	default:
		delete(p.running, path)
		p.finished++
		p.counts[what]++
		switch what {
		case "cached", "skipped": // no work: out of the total
			p.totalW -= p.weight[path]
		default:
			p.doneW += p.weight[path]
			p.executed++
		}
		if what == "cached" {
			p.cachedRun++
			break
		}
		if p.term {
			p.clear()
		} else {
			p.flushCached()
		}
		line := fmt.Sprintf("%-8s %s", what, path)
		if err != nil {
			line += ": " + err.Error()
		}
		fmt.Fprintf(p.out, "[%d/%d] %s\n", p.finished, p.total, line)
		if now := time.Now(); !p.term && now.Sub(p.lastLine) >= p.lineEvery && p.finished < p.total {
			p.lastLine = now
			if d, ok := p.left(now); ok {
				n, s := p.total-p.finished, "s"
				if n == 1 {
					s = ""
				}
				fmt.Fprintf(p.out, "[%d/%d] %d task%s left: about %s at this run's pace so far (%d executed in %s; each task weighed by its predicted time)\n",
					p.finished, p.total, n, s, d, p.executed, now.Sub(p.start).Round(time.Second))
			}
		}
	}
	if p.term {
		p.draw(true)
	}
}

// flushCached prints one line for the cached tasks not yet reported (in a
// pipe; a terminal shows them in the bar's count).
func (p *progress) flushCached() {
	if p.cachedRun == 0 || p.term {
		p.cachedRun = 0
		return
	}
	s := "s"
	if p.cachedRun == 1 {
		s = ""
	}
	fmt.Fprintf(p.out, "[%d/%d] cached   %d task%s (identity unchanged, output intact)\n", p.finished, p.total, p.cachedRun, s)
	p.cachedRun = 0
}

func (p *progress) task(path string, done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running[path] = [2]int64{done, total}
	if p.term {
		p.draw(false)
	}
}

func (p *progress) logf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.term {
		p.clear()
	} else {
		p.flushCached()
	}
	fmt.Fprintf(p.out, format+"\n", args...)
	if p.term {
		p.draw(true)
	}
}

func (p *progress) clear() { fmt.Fprint(p.out, "\r\033[K") }

func (p *progress) draw(force bool) {
	if !force && time.Since(p.lastDraw) < 100*time.Millisecond {
		return
	}
	p.lastDraw = time.Now()
	const width = 30
	frac := 0.0
	if p.total > 0 {
		frac = float64(p.finished) / float64(p.total)
	}
	// Count running tasks' partial progress towards the bar.
	var names []string
	for k, v := range p.running {
		if v[1] > 0 {
			frac += float64(v[0]) / float64(v[1]) / float64(max(p.total, 1))
		}
		names = append(names, k)
	}
	sort.Strings(names)
	filled := int(frac * width)
	eta := "?"
	if d, ok := p.left(time.Now()); ok {
		eta = d.String()
	}
	cur := ""
	if len(names) > 0 {
		cur = names[0]
		if len(names) > 1 {
			cur += fmt.Sprintf(" (+%d)", len(names)-1)
		}
	}
	p.clear()
	fmt.Fprintf(p.out, "[%s%s] %d/%d tasks  ETA %s  %s", strings.Repeat("#", filled), strings.Repeat(".", width-filled), p.finished, p.total, eta, cur)
}

func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.term {
		p.clear()
	}
	p.flushCached()
	var parts []string
	for _, k := range []string{"done", "cached", "failed", "skipped", "interrupted"} {
		if p.counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.counts[k], k))
		}
	}
	fmt.Fprintf(p.out, "run finished in %s: %s\n", time.Since(p.start).Round(time.Millisecond), strings.Join(parts, ", "))
}
