package provenance

import "zorepro/pipeline"

// Record is what an engine has recorded (its plan, store and event log),
// read back: the forensics commands are its methods. It never writes to
// the engine's store or log, except GC, which removes what no recorded
// run references.
type Record struct {
	eng *pipeline.Engine
}

// New returns the record of e's store and log, read against e's plan, code
// identity and platform.
func New(e *pipeline.Engine) *Record { return &Record{eng: e} }
