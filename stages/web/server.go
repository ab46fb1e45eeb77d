package web

import (
	"bytes"
	"crypto/subtle"
	"embed"
	"errors"
	"html/template"
	"log"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/provenance"
	"zorepro/stages/interim"
	"zorepro/stages/plot"
)

// Prediction is the dry run's critical-path schedule of what is left.
type Prediction struct {
	Remaining time.Duration
	Workers   int // the workers it schedules on (the latest run's --jobs)
	// Stages is each stage's task time left (provenance.Schedule's).
	Stages []provenance.StageLeft
	// Times is the predicted time of each task left with a known time, by
	// path (provenance.Schedule's): a running task's page row says how
	// long it has run of it.
	Times map[string]time.Duration
}

// Options configure a Server.
type Options struct {
	// Token, when set, must come with every request.
	Token string
	// Predict, when set, predicts the remaining wall time from xs, a dry
	// run of the plan on the store's state (the critical-path schedule of
	// what xs would run); the overview calls it in the background at most
	// every 30 s, with the dry run the claims page shares.
	Predict func(xs []provenance.Explained) (Prediction, error)
	// Predicted is a running run's own prediction of its wall time, made
	// when it started (run --serve).
	Predicted time.Duration
	// Profile is the profile shown.
	Profile string
	// AllowReexecute offers, on every point's page, a button that
	// re-executes the point's tasks into a scratch directory (serve
	// --allow-reexecute; for a store at rest). It is the one request that
	// is not read-only.
	AllowReexecute bool
	// ErrorLog receives the errors of failed pages (nil: discarded).
	ErrorLog *log.Logger
}

// Server answers the pages of one store. Make one with New; it is an
// http.Handler safe for concurrent requests.
type Server struct {
	eng *pipeline.Engine
	opt Options
	mux *http.ServeMux

	dryMu sync.Mutex
	dry   *dryRun // the latest dry run, shared by the prediction and the claims page

	estMu      sync.Mutex
	est        *estimate // the latest prediction of the remaining time
	predicting bool      // a prediction is being computed
	tried      time.Time // when the latest prediction started

	reexecMu sync.Mutex // one re-execution at a time

	ovMu   sync.Mutex
	ov     *Overview // the overview computed at ovAt
	ovPage []byte    // and its page
	ovAt   time.Time

	runsMu sync.Mutex
	runs   map[uint64]*runCount // the runs page's rows, counted so far

	claimsMu   sync.Mutex
	claims     *interim.Doc // the latest claims page's report
	claimsAt   time.Time
	claimsBusy bool         // a recomputation is under way
	claimsMemo interim.Memo // the figures it plotted, by their inputs
}

// dryRun is a dry run of the plan on what the store recorded at a time.
type dryRun struct {
	xs []provenance.Explained
	at time.Time
}

// dryReuse is how long one dry run serves every page that needs one: the
// overview's prediction (every 30 s) and the claims page (every 20 s)
// share it when they ask within this of each other (a dry run of the
// paper profile's 20,027 tasks is about 2 s of CPU).
const dryReuse = 15 * time.Second

// explain returns a dry run of the plan made at most dryReuse ago, making
// one if there is none; a second caller waits for the one being made.
func (s *Server) explain() ([]provenance.Explained, time.Time, error) {
	s.dryMu.Lock()
	defer s.dryMu.Unlock()
	if s.dry != nil && time.Since(s.dry.at) < dryReuse {
		return s.dry.xs, s.dry.at, nil
	}
	at := time.Now()
	xs, err := provenance.New(s.eng).Explain()
	if err != nil {
		return nil, time.Time{}, err
	}
	s.dry = &dryRun{xs: xs, at: at}
	return xs, at, nil
}

//go:embed assets/style.css
var assets embed.FS

// csp allows this server's own stylesheet and images and nothing else:
// no script, no frame, no request to another origin.
const csp = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// tokenCookie carries the token after a first request gave it.
const tokenCookie = "pipeline_token"

// New returns the Server of eng's store and plan.
func New(eng *pipeline.Engine, opt Options) *Server {
	s := &Server{eng: eng, opt: opt, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /{$}", s.overview)
	s.mux.HandleFunc("GET /overview.json", s.overviewJSON)
	s.mux.HandleFunc("GET /task/{path...}", s.page(s.taskPage))
	s.mux.HandleFunc("GET /figures", s.page(s.figuresPage))
	s.mux.HandleFunc("GET /figure/{name}", s.page(s.figurePage))
	s.mux.HandleFunc("GET /point", s.page(s.pointPage))
	s.mux.HandleFunc("GET /claims", s.page(s.claimsPage))
	s.mux.HandleFunc("GET /runs", s.page(s.runsPage))
	s.mux.HandleFunc("GET /compare", s.page(s.comparePage))
	s.mux.HandleFunc("POST /reexecute", s.page(s.reexecute))
	s.mux.HandleFunc("GET /figure-file/{name}", s.figureFile)
	s.mux.HandleFunc("GET /interim-file/{name}", s.interimImage)
	s.mux.HandleFunc("GET /static/style.css", func(w http.ResponseWriter, r *http.Request) {
		b, _ := assets.ReadFile("assets/style.css")
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Write(b)
	})
	// Count the runs' events now: the first request for the runs page
	// would otherwise read all of them. Predict the time left now too: the
	// first overview would otherwise have no prediction, and without one
	// it counts another profile's done tasks as this one's.
	go s.runRows()
	s.estimate()
	return s
}

// ServeHTTP checks the token, sets the security headers and serves.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	post := r.Method == http.MethodPost && r.URL.Path == "/reexecute" && s.opt.AllowReexecute
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !post {
		http.Error(w, "read-only: only GET (and POST /reexecute when the server allows re-execution)", http.StatusMethodNotAllowed)
		return
	}
	if post && !sameOrigin(r) {
		http.Error(w, "a re-execution must be asked for from this server's own page", http.StatusForbidden)
		return
	}
	if s.opt.Token != "" {
		if q := r.URL.Query().Get("token"); q != "" && s.tokenOK(q) {
			// Keep it in a cookie and drop it from the address bar.
			http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: q, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			u := *r.URL
			qs := u.Query()
			qs.Del("token")
			u.RawQuery = qs.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		if !s.authorized(r) {
			http.Error(w, "this server needs its token: open it with ?token=...", http.StatusUnauthorized)
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// sameOrigin reports whether a request comes from this server's own pages:
// another site's page must not start a re-execution. Browsers say where a
// request comes from in Sec-Fetch-Site (older ones only in Origin, which
// this server's no-referrer policy turns into "null" for a form's POST); a
// request with neither is not from a browser's page.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin"
	}
	o := r.Header.Get("Origin")
	return o == "" || o == "http://"+r.Host || o == "https://"+r.Host
}

func (s *Server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.opt.Token)) == 1
}

func (s *Server) authorized(r *http.Request) bool {
	if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && s.tokenOK(b) {
		return true
	}
	c, err := r.Cookie(tokenCookie)
	return err == nil && s.tokenOK(c.Value)
}

// view is what a page function returns: the template and its data, or
// an error.
type view struct {
	tmpl    string
	title   string
	data    any
	refresh bool // reload every second (a run is in progress)
}

// page wraps a page function: it renders the view into the layout, or
// answers the error (404 for what is not recorded).
func (s *Server) page(fn func(r *http.Request) (*view, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := fn(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		page, err := s.render(v)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	}
}

// render renders a view into the layout.
func (s *Server) render(v *view) ([]byte, error) {
	var b bytes.Buffer
	err := pages.ExecuteTemplate(&b, v.tmpl, layoutData{Title: v.title, Profile: s.opt.Profile, Refresh: v.refresh, Data: v.data})
	return b.Bytes(), err
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, ErrNotFound):
		code = http.StatusNotFound
	case errors.Is(err, ErrNotAllowed):
		code = http.StatusForbidden
	case errors.Is(err, ErrBusy):
		code = http.StatusConflict
	}
	if s.opt.ErrorLog != nil && code == http.StatusInternalServerError {
		s.opt.ErrorLog.Printf("%s: %v", r.URL.Path, err)
	}
	if !wantsPage(r) {
		http.Error(w, err.Error(), code)
		return
	}
	page, perr := s.render(&view{tmpl: "error.html", title: http.StatusText(code), data: err.Error()})
	if perr != nil {
		http.Error(w, err.Error(), code)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	w.Write(page)
}

// wantsPage reports whether r is a browser asking for a page (not a
// figure's file, an image, the stylesheet or JSON): its error is a page
// with the navigation, not a bare line.
func wantsPage(r *http.Request) bool {
	p := r.URL.Path
	for _, prefix := range []string{"/figure-file/", "/interim-file/", "/static/"} {
		if strings.HasPrefix(p, prefix) {
			return false
		}
	}
	return !strings.HasSuffix(p, ".json") && strings.Contains(r.Header.Get("Accept"), "text/html")
}

type layoutData struct {
	Title, Profile string
	Refresh        bool
	Data           any
}

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"dur":   func(d time.Duration) string { return d.Round(time.Second).String() },
	"path":  pathURL,
	"float": formatFloat,
	"short": func(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) },
	"count": func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) },
	// density is how many PNG pixels a figure draws per CSS pixel
	// (plot.PNGDPI against the browser's 96 dpi): an img with only a
	// srcset "NAME {{density}}x" (a src beside it would be taken as the
	// 1x candidate) shows at the size its SVG gives, not twice it.
	"density": func() string { return strconv.FormatFloat(plot.PNGDPI/96.0, 'g', -1, 64) },
}).ParseFS(templates, "templates/*.html"))

//go:embed templates/*.html
var templates embed.FS
