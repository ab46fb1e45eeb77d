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
}

func newProgress(out io.Writer, term bool, total int) *progress {
	if out == nil {
		out = io.Discard
	}
	return &progress{out: out, term: term, total: total, counts: map[string]int{}, start: time.Now(), running: map[string][2]int64{}}
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
	if el := time.Since(p.start); frac > 0.01 {
		eta = (time.Duration(float64(el)/frac) - el).Round(time.Second).String()
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
