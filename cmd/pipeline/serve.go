package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/events"
	"zorepro/pipeline/provenance"
	"zorepro/stages/web"
)

// serveCmd serves the browser view of a store (stages/web).
type serveCmd struct {
	planFlags
	addr, token string
	reexecute   bool
}

func (c *serveCmd) doc() commandDoc {
	return commandDoc{name: "serve", summary: "serve the browser view of a store: run overview, tasks, figures, each point's audit trail",
		detail: "It binds to 127.0.0.1:8080 unless --addr says otherwise; an address other than loopback needs --token\n" +
			"(or PIPELINE_TOKEN), which every request must then carry (open the page once with ?token=...).\n" +
			"A store at rest is read through a private copy of its event log (in $TMPDIR), so that a run can start\n" +
			"on it meanwhile; a store a run holds through the run's snapshot. The pages move on with each newer\n" +
			"snapshot (the run takes one every --snapshot-interval) and to a new copy once the run has ended;\n" +
			"`pipeline run --serve ADDR` serves the same pages from the running process, live."}
}

func (c *serveCmd) define(f *flagSet) {
	c.planFlags.define(f)
	f.String(&c.addr, "addr", "127.0.0.1:8080", "the address to listen on")
	tokenFlag(f, &c.token)
	f.Bool(&c.reexecute, "allow-reexecute", "offer on each point's page a button that re-executes its tasks into a scratch directory and compares them (as verify)")
}

// tokenFlag binds --token (serve, and run for --serve).
func tokenFlag(f *flagSet, dst *string) {
	f.String(dst, "token", "", "a secret every request to the browser view must carry; required for an address other than loopback")
}

func (c *serveCmd) check(args []string) []string {
	p := noArgs("serve", args)
	if err := checkServeAddr(c.addr, c.token); err != nil {
		p = append(p, "pipeline serve: "+err.Error())
	}
	return p
}

// checkServeAddr refuses an address that is not loopback unless a token
// guards it.
func checkServeAddr(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q is not host:port: %v", addr, err)
	}
	if loopback(host) || token != "" {
		return nil
	}
	return fmt.Errorf("--addr %q is not a loopback address: anyone who can reach it could read the store; give --token SECRET (or bind 127.0.0.1)", addr)
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (c *serveCmd) run(inv *invocation) (int, error) {
	return c.readingAs(inv, serving, func(eng *pipeline.Engine) (int, error) {
		logger := log.New(inv.stderr, "serve: ", 0)
		srv := web.New(eng, web.Options{Token: c.token, Profile: c.profile, AllowReexecute: c.reexecute, ErrorLog: logger,
			Predict: func(xs []provenance.Explained) (web.Prediction, error) {
				workers := latestJobs(eng.Events)
				sched, err := predictRemaining(eng, xs, workers)
				if err != nil {
					return web.Prediction{}, err
				}
				return web.Prediction{Remaining: sched.Walls[0].Wall, Workers: workers, Stages: sched.Stages, Times: sched.Times}, nil
			}})
		ln, err := listen(c.addr)
		if err != nil {
			return exitFailed, err
		}
		stop, followed := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(followed)
			followStore(eng.Events, logger, stop)
		}()
		defer func() {
			close(stop)
			<-followed
		}()
		return serveOn(inv, ln, srv, nil)
	})
}

// followEvery is how often serve looks for a newer state of its store (a
// run replaces its snapshot every --snapshot-interval).
const followEvery = time.Second

// followStore moves the log serve reads (a private copy of a log at
// rest, or a running run's snapshot) on to its newer states until stop is
// closed: the run's newer snapshots, and a new copy once a run has ended
// (events.Log.Follow). A failure is logged when it starts; the pages go
// on showing the last state read.
func followStore(l *events.Log, logger *log.Logger, stop <-chan struct{}) {
	if l.SnapshotOf() == "" {
		return
	}
	t := time.NewTicker(followEvery)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		_, err := l.Follow()
		if err != nil && !failing {
			logger.Printf("warning: %v (the pages show the last state read)", err)
		}
		failing = err != nil
	}
}

// latestJobs is the --jobs of the store's latest run (its start records
// them), or 2, the default, where none is recorded.
func latestJobs(l *events.Log) int {
	run, _, err := l.InProgress()
	if err != nil || run == 0 {
		return 2
	}
	if info, err := runStartOf(l, run); err == nil && info.Jobs >= 1 {
		return info.Jobs
	}
	return 2
}

// predictRemaining is the schedule, on workers workers (its one wall), of
// what the dry run xs would run.
func predictRemaining(eng *pipeline.Engine, xs []provenance.Explained, workers int) (*provenance.Schedule, error) {
	sched, err := provenance.New(eng).Schedule(xs, workers)
	if err != nil {
		return nil, err
	}
	if len(sched.Walls) == 0 {
		return nil, errors.New("no schedule")
	}
	return sched, nil
}

// listen opens addr for the browser view.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	return ln, nil
}

// serveOn serves h on ln until the invocation is cancelled (Ctrl-C) or
// done is closed; it says where it listens.
func serveOn(inv *invocation, ln net.Listener, h http.Handler, done <-chan struct{}) (int, error) {
	// No write timeout: a re-execution's answer takes as long as its tasks.
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(inv.stderr, "serve: ", 0)}
	fmt.Fprintf(inv.stderr, "serving http://%s/\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return exitFailed, fmt.Errorf("serve: %w", err)
	case <-inv.ctx.Done():
	case <-done:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	return exitOK, nil
}
