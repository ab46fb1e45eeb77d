// Package web is the browser view of a store: `pipeline serve` serves it
// for a store at rest, and `pipeline run --serve` from the running run's
// own process (bbolt's writer holds an exclusive file lock, so no other
// process can read a live events.db; the run's process reads it through
// read transactions beside its writer).
//
// Pages, all rendered by the server, with no script:
//
//	/                   the run overview: every stage's done, running, pending
//	                    and failed tasks and predicted task time left,
//	                    elapsed time and the dry run's predicted remaining
//	                    wall time (Options.Predict), the running tasks with
//	                    their progress and how long each has run of its
//	                    predicted time (a tuning trial reports no
//	                    iteration), every failure with its error; on a
//	                    running run's snapshot, durations run to the
//	                    snapshot's time (events.Log.AsOf), which it says; it
//	                    reloads itself every second while a run is in
//	                    progress (one computation serves every client for
//	                    0.5 s, so an event shows within 1.5 s); on a store at
//	                    rest a latest run that recorded only its start was
//	                    killed (events.Log.AtRest), not in progress
//	/task/PATH          one task: parameters, identity transcript, outputs
//	                    (short text ones shown whole) and inputs with
//	                    content IDs, attempts and resumes, RNG
//	                    streams, and its iteration events drawn as a learning
//	                    curve (up to 10^5 points, else downsampled, labelled)
//	/figures            every figure a plot task recorded
//	/figure/NAME        one figure: its image and, per panel, every plotted
//	                    point as a link to its audit trail
//	/point?figure=&panel=&curve=&x=
//	                    the audit trail of one point (stages/audit: the
//	                    numbers `pipeline audit --x ... --json` gives)
//	/claims             the report's claims from what the store records now
//	                    (stages/interim): decided ones with each finding
//	                    linked to its points, waiting ones with what for,
//	                    figures plotted from recorded inputs drawn
//	                    (/interim-file/NAME)
//	/runs, /compare?a=&b=
//	                    every run; two runs side by side: what reran and
//	                    why, which figures and verdicts changed
//	POST /reexecute     (Options.AllowReexecute only) re-executes a point's
//	                    tasks into a scratch directory, as verify does
//	/figure-file/NAME   a file of a recorded figure output (PNG, SVG, CSV)
//	/overview.json      the overview's numbers
//
// Safety: the handler is read-only (but for the re-execute button, which
// must come from this server's own pages) and serves only what the event log
// records and the files of recorded figure outputs, by name, never a path
// of the file system. With a token every request must carry it (the query
// parameter "token" once, which sets a cookie, or an Authorization bearer
// header); tokens are compared in constant time. Every response carries a
// Content-Security-Policy that allows nothing but this server's own
// stylesheet and images, and lists are bounded (events, iterations).
//
// Nothing here is in any task's identity.
package web
