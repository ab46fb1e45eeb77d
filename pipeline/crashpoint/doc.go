// Package crashpoint is a test seam for crash-safety tests: named sites in
// the code where a test can make the process die abruptly.
//
// A site is one line, crashpoint.Hit("store.before-rename"). It does
// nothing (one atomic load) unless the process was started with one of
// these environment variables set:
//
//	PIPELINE_CRASHPOINT=SITE:N         at the N-th hit of SITE (N >= 1) the
//	                                   process SIGKILLs itself
//	PIPELINE_CRASHPOINT=*:N            at the N-th hit of any site
//	PIPELINE_CRASHPOINT=SITE:N:stop    at the N-th hit of SITE the process
//	                                   SIGSTOPs itself instead: a test then
//	                                   signals it at a known point (SIGINT,
//	                                   then SIGCONT)
//	PIPELINE_CRASHPOINT_COUNTS=FILE    WriteCounts writes the hits per site
//	                                   to FILE as a JSON object
//
// The kill is SIGKILL sent by the process to itself: no deferred function,
// finalizer or buffered write runs, as after a power cut of the process
// (the operating system's page cache survives, so this tests process
// crashes, not disk loss). A harness learns the range of N from a run with
// PIPELINE_CRASHPOINT_COUNTS, then reruns with PIPELINE_CRASHPOINT and
// checks that resuming after the kill gives the same result.
//
// The variables are read once, at process start; a malformed
// PIPELINE_CRASHPOINT panics then, so that a harness never believes it
// crashed a run that it did not. Nothing in the pipeline sets them:
// production runs only pay for the atomic load.
//
// Sites in the pipeline:
//
//	store.before-rename    an entry's temp file is written, synced and closed; not yet renamed
//	store.after-rename     the entry is renamed into cas/; its directory is not yet synced
//	events.before-commit   a write transaction's changes are made; not yet committed
//	events.after-commit    a write transaction committed
//	engine.checkpoint      a checkpoint's bytes are in the store; its event is not yet appended
//	engine.published       a task's output manifest is in the store; its "done" event is not yet appended
//	bundle.member          export: a member is about to be written; import: one was read
//	remote.object          push: an object was written to the remote; pull: one was fetched and verified
package crashpoint
