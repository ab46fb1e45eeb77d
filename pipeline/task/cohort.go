package task

// Cohort is implemented by runners whose tasks draw the same costly values
// as other tasks of the plan (the tuning trials of one seed draw the same
// data batches at every grid point). The engine runs the ready tasks that
// report one non-empty key together, on one worker, and gives each the same
// Sharer (through ShareEnv); a task run alone (a cluster attempt, a
// re-execution) computes everything itself, with the same bits. Each task
// of a cohort is still a task of its own: its own identity, events, output
// and cache entry.
type Cohort interface {
	CohortKey() string
}

// Sharer hands the tasks of a cohort values computed once.
//
// Share returns the value stored under key, computing it with make the
// first time a task of the cohort asks for it. The tasks take turns: a call
// to Share first lets every other running task of the cohort reach its own
// next call (one task computes at a time, so a cohort uses one worker), and
// a value is dropped once every task still running has taken it. A key
// must name its value completely (the same key, the same bits), and the
// caller must not modify the value.
type Sharer interface {
	Share(key string, make func() any) any
}

// ShareEnv is implemented by the Env of a task that runs in a cohort.
// Sharer returns nil when the task runs alone.
type ShareEnv interface {
	Sharer() Sharer
}
