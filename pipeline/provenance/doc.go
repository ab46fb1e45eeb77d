// Package provenance reads back what the engine recorded and checks it:
// the forensics half of the engine floor, next to the scheduler (package
// pipeline) it builds on. A Record (New) wraps an engine's plan, store and
// event log.
//
//   - Produced finds, for an output, the action, the runs that executed it
//     (segments: a start and its resumes), its transcript, streams and
//     iteration events (each resume replacing what an earlier run recorded
//     past its checkpoint). FindFigure maps an exported figure file back to
//     the plot task that wrote it; the figure audit (stages/audit) builds on
//     both. Production picks, for a task, the output this binary and
//     dag.yaml would reuse (a store may record several actions of one task
//     path), else its latest; show, replay and verify read that one.
//   - Reexecute runs a recorded action again from its recorded inputs into
//     a Scratch store and log (pipeline.Engine.RunOne), refusing with an
//     IdentityError when code, parameters or platform changed. Replay
//     compares the recomputed iteration events bit for bit, Verify the
//     output IDs.
//   - GC removes store entries that no recorded run references.
//   - Explain says, per task, whether a run would execute or reuse it and
//     why; Estimate turns that into a dry-run cost per stage from recorded
//     speeds; TaskTimes sums recorded task time per stage.
//
// Invariants: nothing here writes to the engine's store or log except GC
// (which holds the log's lock); re-executions write only to a Scratch.
// Errors not recorded in the log are ErrNotRecorded; unknown tasks
// ErrUnknownTask.
package provenance
