package provenance

import (
	"container/heap"
	"slices"
	"time"

	"zorepro/pipeline/dag"
)

// Schedule is what the planned run's DAG allows, from each task's
// predicted time (taskTimes; a cached task takes none, a task with no
// known time is counted as taking none): the critical path, the longest
// chain of dependent tasks, which no number of workers can beat; and the
// wall time the engine's own scheduling (a ready queue in plan order, the
// first free worker takes the next task) would take with a given number
// of workers, without any executor's overhead per task.
type Schedule struct {
	Tasks   int `json:"tasks"`         // tasks that would run
	Unknown int `json:"tasks_untimed"` // of them, without a known time
	// Unrated tasks are the untimed ones with a sample budget (training,
	// tuning), whose stages no recorded run has given a rate yet: they can
	// be most of a plan's time, so walls that leave them out are lower
	// bounds. UnratedStages names their stages in plan order.
	Unrated       int           `json:"tasks_unrated"`
	UnratedStages []string      `json:"unrated_stages,omitempty"`
	TaskTime      time.Duration `json:"task_time"`
	Critical      time.Duration `json:"critical_path"`
	// Path is the critical path's tasks that would run, upstream first.
	Path  []string      `json:"critical_path_tasks"`
	Walls []WorkersWall `json:"walls"`
	// Overhead is the executor's cost the walls include (zero: none).
	Overhead Overhead `json:"executor_overhead"`
	// Stages is each stage's share of TaskTime, in plan order (the stages
	// with a task that would run).
	Stages []StageLeft `json:"stages,omitempty"`
	// Times is the predicted time of each task that would run and has a
	// known time, by path (the browser view's running tasks).
	Times map[string]time.Duration `json:"-"`
}

// StageLeft is a stage's tasks that would run and their summed time, one
// worker each, of the Timed ones (a known time; the others count as none).
// Changed of them would run because their identity changed since their
// latest recorded run (Explained.Changed).
type StageLeft struct {
	Stage    string        `json:"stage"`
	Tasks    int           `json:"tasks"`
	Timed    int           `json:"tasks_timed"`
	Changed  int           `json:"tasks_changed"`
	TaskTime time.Duration `json:"task_time"`
}

// Overhead is an executor's cost beyond the tasks' own time: PerTask is
// added to every task that would run (e.g. a Slurm runner's hand-over of
// an attempt), Start to every wall once (the first jobs' wait in the
// queue).
type Overhead struct {
	PerTask time.Duration `json:"per_task"`
	Start   time.Duration `json:"start"`
}

// WorkersWall is the predicted wall time with Workers workers.
type WorkersWall struct {
	Workers int           `json:"workers"`
	Wall    time.Duration `json:"wall"`
}

// Schedule predicts the critical path and the wall time at each of the
// given worker counts for the tasks Explain says would run.
func (r *Record) Schedule(xs []Explained, workers ...int) (*Schedule, error) {
	return r.ScheduleWith(xs, Overhead{}, workers...)
}

// ScheduleWith is Schedule with an executor's overhead.
func (r *Record) ScheduleWith(xs []Explained, o Overhead, workers ...int) (*Schedule, error) {
	tt, err := r.taskTimes(xs)
	if err != nil {
		return nil, err
	}
	tasks := r.eng.Plan.Tasks
	dur := make([]float64, len(tasks))
	s := &Schedule{Overhead: o, Times: map[string]time.Duration{}}
	var total float64
	stage := map[string]int{} // index in s.Stages
	secs := []float64{}       // each stage's summed seconds
	changed := map[string]bool{}
	for _, x := range xs {
		if x.Changed {
			changed[x.Task] = true
		}
	}
	for i, x := range tt {
		if !x.run {
			continue
		}
		s.Tasks++
		name := tasks[i].Stage.Name
		k, ok := stage[name]
		if !ok {
			k = len(s.Stages)
			stage[name] = k
			s.Stages = append(s.Stages, StageLeft{Stage: name})
			secs = append(secs, 0)
		}
		s.Stages[k].Tasks++
		if changed[tasks[i].Path] {
			s.Stages[k].Changed++
		}
		if x.source != "" {
			s.Stages[k].Timed++
			secs[k] += x.secs
			s.Times[tasks[i].Path] = time.Duration(x.secs * float64(time.Second))
		} else {
			s.Unknown++
			if x.samples > 0 {
				s.Unrated++
				if !slices.Contains(s.UnratedStages, name) {
					s.UnratedStages = append(s.UnratedStages, name)
				}
			}
		}
		dur[i] = x.secs + o.PerTask.Seconds()
		total += x.secs
	}
	s.TaskTime = seconds(total)
	for k := range s.Stages {
		s.Stages[k].TaskTime = seconds(secs[k])
	}
	length, path := criticalPath(tasks, dur)
	s.Critical = seconds(length)
	for _, i := range path {
		if tt[i].run {
			s.Path = append(s.Path, tasks[i].Path)
		}
	}
	for _, w := range workers {
		s.Walls = append(s.Walls, WorkersWall{Workers: w, Wall: seconds(listSchedule(tasks, dur, w) + o.Start.Seconds())})
	}
	return s, nil
}

// criticalPath returns the length of the longest chain of dependent tasks
// (summing dur, by plan index) and its tasks' indices, upstream first.
// tasks is in topological order, as a plan is.
func criticalPath(tasks []*dag.Task, dur []float64) (float64, []int) {
	finish := make([]float64, len(tasks))
	via := make([]int, len(tasks))
	end := -1
	for _, t := range tasks {
		via[t.Index] = -1
		for _, d := range t.Deps {
			if finish[d.Index] > finish[t.Index] {
				finish[t.Index], via[t.Index] = finish[d.Index], d.Index
			}
		}
		finish[t.Index] += dur[t.Index]
		if end < 0 || finish[t.Index] > finish[end] {
			end = t.Index
		}
	}
	if end < 0 {
		return 0, nil
	}
	var path []int
	for i := end; i >= 0; i = via[i] {
		path = append([]int{i}, path...)
	}
	return finish[end], path
}

func seconds(x float64) time.Duration {
	return time.Duration(x * float64(time.Second)).Round(time.Second)
}

// listSchedule simulates the engine's scheduler: tasks become ready when
// their dependencies finish, the ready task of lowest plan index starts on
// the first free worker. It returns the time the last task finishes.
func listSchedule(tasks []*dag.Task, dur []float64, workers int) float64 {
	waiting := make([]int, len(tasks))
	down := make([][]int, len(tasks))
	ready := &queue[int]{less: func(a, b int) bool { return a < b }}
	for _, t := range tasks {
		waiting[t.Index] = len(t.Deps)
		for _, d := range t.Deps {
			down[d.Index] = append(down[d.Index], t.Index)
		}
		if len(t.Deps) == 0 {
			ready.xs = append(ready.xs, t.Index)
		}
	}
	heap.Init(ready)
	running := &queue[finishing]{less: byFinish}
	now, free := 0.0, max(workers, 1)
	for ready.Len() > 0 || running.Len() > 0 {
		for free > 0 && ready.Len() > 0 {
			i := heap.Pop(ready).(int)
			heap.Push(running, finishing{at: now + dur[i], task: i})
			free--
		}
		f := heap.Pop(running).(finishing)
		now = f.at
		free++
		for _, d := range down[f.task] {
			if waiting[d]--; waiting[d] == 0 {
				heap.Push(ready, d)
			}
		}
	}
	return now
}

type finishing struct {
	at   float64
	task int
}

// byFinish orders running tasks by finish time, then plan index.
func byFinish(a, b finishing) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.task < b.task
}

// queue is a binary heap of T under less (container/heap's operations).
type queue[T any] struct {
	xs   []T
	less func(a, b T) bool
}

func (q *queue[T]) Len() int           { return len(q.xs) }
func (q *queue[T]) Less(i, j int) bool { return q.less(q.xs[i], q.xs[j]) }
func (q *queue[T]) Swap(i, j int)      { q.xs[i], q.xs[j] = q.xs[j], q.xs[i] }
func (q *queue[T]) Push(x any)         { q.xs = append(q.xs, x.(T)) }
func (q *queue[T]) Pop() any {
	x := q.xs[len(q.xs)-1]
	q.xs = q.xs[:len(q.xs)-1]
	return x
}
