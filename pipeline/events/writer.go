package events

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// WriterOptions configure a Writer. Zero fields take the defaults.
type WriterOptions struct {
	// MaxBatch is the most events committed in one transaction; default 1000.
	MaxBatch int
	// MaxDelay is the longest an appended event waits for its batch to
	// fill before it is committed anyway; default 20ms.
	MaxDelay time.Duration
	// QueueLen is how many events Append can queue before it blocks;
	// default 4096.
	QueueLen int
	// OnError, if set, is called once, from the writer goroutine, with the
	// first commit error (the one Err then returns), so that the caller can
	// stop producing events that can no longer be recorded. It must not
	// block or call the Writer.
	OnError func(error)
}

const (
	defaultMaxBatch = 1000
	defaultMaxDelay = 20 * time.Millisecond
	defaultQueueLen = 4096
)

// Writer appends events through one goroutine that commits them in
// batches, in Append order. Its methods are safe for concurrent use; events
// appended concurrently are committed in the order the queue received them.
type Writer struct {
	log *Log
	opt WriterOptions
	ch  chan message

	mu     sync.RWMutex // held for reading while sending on ch, for writing to close
	closed bool

	err  atomic.Pointer[error] // first error, sticky
	done chan struct{}         // closed when the goroutine exits
}

// message is an event, a flush request or the close request.
type message struct {
	ev    Event
	flush chan struct{} // closed once everything before it is committed
	close bool
}

// NewWriter starts the Log's writer goroutine. A Log has at most one open
// Writer; calling NewWriter while one is open panics. On a read-only Log
// the Writer drops every event and reports ErrReadOnly.
func (l *Log) NewWriter(opt WriterOptions) *Writer {
	if opt.MaxBatch <= 0 {
		opt.MaxBatch = defaultMaxBatch
	}
	if opt.MaxDelay <= 0 {
		opt.MaxDelay = defaultMaxDelay
	}
	if opt.QueueLen <= 0 {
		opt.QueueLen = defaultQueueLen
	}
	w := &Writer{log: l, opt: opt, ch: make(chan message, opt.QueueLen), done: make(chan struct{})}
	if l.readOnly {
		w.setErr(fmt.Errorf("%w: %s", ErrReadOnly, l.path))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.writer != nil {
		panic("events: NewWriter called while another Writer of " + l.path + " is open")
	}
	l.writer = w
	go w.run()
	return w
}

// Append queues ev for commit; it blocks only while the queue is full. The
// seq is assigned at commit, so ev.Seq is ignored. After a commit error, or
// after Close, the event is dropped and Err reports why. Append panics with
// an error wrapping ErrInvalidEvent if ev cannot be stored (see
// ErrInvalidEvent); that is a programming error.
func (w *Writer) Append(ev Event) {
	if err := validate(&ev); err != nil {
		panic(err)
	}
	if w.Err() != nil {
		return
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		w.setErr(fmt.Errorf("%w: %s event of task %q dropped", ErrWriterClosed, ev.Type, ev.Task))
		return
	}
	w.ch <- message{ev: ev}
}

// Flush waits until every event appended before the call is committed and
// returns the first commit error, if any.
func (w *Writer) Flush() error {
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return w.Err()
	}
	done := make(chan struct{})
	w.ch <- message{flush: done}
	w.mu.RUnlock()
	<-done
	return w.Err()
}

// Close commits everything appended, stops the goroutine and returns the
// first error, if any. Calling it again returns the same error.
func (w *Writer) Close() error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		w.ch <- message{close: true}
	}
	w.mu.Unlock()
	<-w.done
	w.log.mu.Lock()
	if w.log.writer == w {
		w.log.writer = nil
	}
	w.log.mu.Unlock()
	return w.Err()
}

// Err returns the first error: a commit error (after which every event is
// dropped), ErrReadOnly, or ErrWriterClosed.
func (w *Writer) Err() error {
	if p := w.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (w *Writer) setErr(err error) { w.err.CompareAndSwap(nil, &err) }

// run is the writer goroutine: it collects events into a batch and commits
// it when it holds MaxBatch events, MaxDelay after its first event, or on
// a flush or close request.
func (w *Writer) run() {
	defer close(w.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	batch := make([]Event, 0, w.opt.MaxBatch)
	commit := func() {
		timer.Stop()
		if len(batch) == 0 {
			return
		}
		if w.Err() == nil {
			if err := w.log.update(func(tx *wtx) error {
				for i := range batch {
					if err := tx.apply(&batch[i]); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				w.setErr(fmt.Errorf("events: commit of %d events to %s failed; the writer drops all later events: %w",
					len(batch), w.log.path, err))
				if w.opt.OnError != nil {
					w.opt.OnError(w.Err())
				}
			}
		}
		clear(batch) // drop references to the events' slices
		batch = batch[:0]
	}
	for {
		select {
		case m := <-w.ch:
			switch {
			case m.flush != nil:
				commit()
				close(m.flush)
			case m.close:
				commit()
				return
			case w.Err() != nil:
				// Dropped: a commit already failed.
			default:
				batch = append(batch, m.ev)
				if len(batch) == 1 {
					timer.Reset(w.opt.MaxDelay)
				}
				if len(batch) >= w.opt.MaxBatch {
					commit()
				}
			}
		case <-timer.C:
			commit()
		}
	}
}
