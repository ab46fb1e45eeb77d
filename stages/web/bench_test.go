package web

import (
	"flag"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/events"
	"zorepro/pipeline/pipelinetest"
	"zorepro/pipeline/store"
	"zorepro/stages"
)

var (
	benchStore   = flag.String("web.store", "", "the store BenchmarkPages reads (a running run's is read through its snapshot)")
	benchDAG     = flag.String("web.dag", "../../dag.yaml", "the DAG file of -web.store")
	benchProfile = flag.String("web.profile", "paper", "the profile of -web.store")
	benchPoint   = flag.String("web.point", "figure=fig2-linreg&panel=1000&curve=ars&x=300000", "the point whose audit trail is timed")
	benchTask    = flag.String("web.task", "tune/linreg/d=1000/method=ars", "the task whose page is timed")
)

// BenchmarkPages times each page on a real store, e.g. the paper
// profile's (20,027 tasks): the answer's time after one warm-up request
// (the runs and claims pages keep what they computed):
//
//	go test -run '^$' -bench Pages ./stages/web/ -args -web.store /path/to/store
func BenchmarkPages(b *testing.B) {
	if *benchStore == "" {
		b.Skip("give -web.store DIR (and -web.profile, -web.dag)")
	}
	path := filepath.Join(*benchStore, "events.db")
	log, err := events.OpenSnapshot(path, events.Options{Timeout: time.Second})
	if err != nil {
		log, err = events.Open(path, events.Options{ReadOnly: true, Timeout: time.Second})
	}
	if err != nil {
		b.Fatal(err)
	}
	defer log.Close()
	st, err := store.OpenWith(*benchStore, store.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	plan, err := dag.Load(*benchDAG, *benchProfile, stages.Kinds())
	if err != nil {
		b.Fatal(err)
	}
	// The claims page's identities need a code identity; a fake one
	// plans more to run than the binary would, which only makes it slower.
	srv := New(&pipeline.Engine{Plan: plan, Store: st, Events: log, Code: pipelinetest.NewFakeCode(), Platform: pipeline.HostPlatform()}, Options{Profile: *benchProfile})
	b.Logf("%d tasks", len(plan.Tasks))
	for _, p := range []struct{ name, url string }{
		{"overview", "/"}, {"overview.json", "/overview.json"}, {"figures", "/figures"}, {"figure", "/figure/fig2-linreg"},
		{"task", "/task/" + *benchTask}, {"point", "/point?" + *benchPoint}, {"claims", "/claims"}, {"runs", "/runs"},
	} {
		b.Run(p.name, func(b *testing.B) {
			get := func() {
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, httptest.NewRequest("GET", p.url, nil))
				if w.Code != 200 {
					b.Fatalf("%s: %d %s", p.url, w.Code, w.Body.String())
				}
			}
			get()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// The overview keeps one computation for 0.5 s: time
				// the computation, not the copy.
				srv.ovMu.Lock()
				srv.ov = nil
				srv.ovMu.Unlock()
				get()
			}
		})
	}
}
