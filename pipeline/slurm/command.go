package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// commandTimeout bounds every Slurm command: a controller that does not
// answer must give an error within seconds.
const commandTimeout = 15 * time.Second

// cmdError is a Slurm command's failure: its message (its standard error,
// or why it did not run) and whether retrying may cure it.
type cmdError struct {
	msg       string
	transient bool
	limit     bool // a per-user or per-account submission limit
}

func (e *cmdError) Error() string { return e.msg }

// transientMarks are substrings of the messages of failures that pass by
// themselves: the controller busy, restarting, failing over or briefly
// unreachable. Anything else (an unknown partition, account or QOS, a bad
// argument, a request no node can meet) fails at once.
var transientMarks = []string{
	"socket timed out", "timed out", "unable to contact slurm controller", "connection refused",
	"connect failure", "temporarily unavailable", "temporarily unable", "try again",
	"zero bytes were transmitted", "communication connection failure", "not responding",
	"transport endpoint", "backup controller", "unable to establish", "connection reset",
	"slurmctld is in standby", "controller is in standby", "resource temporarily",
}

// limitMarks are substrings of submission-limit failures: transient while
// other jobs of the user hold the slots.
var limitMarks = []string{
	"submit limit", "qosmaxsubmitjob", "assocmaxsubmitjob", "maxsubmitjobs", "job violates accounting/qos policy",
}

func classify(name, msg string, timeout bool) *cmdError {
	e := &cmdError{msg: name + ": " + msg, transient: timeout}
	low := strings.ToLower(msg)
	for _, m := range limitMarks {
		if strings.Contains(low, m) {
			e.transient, e.limit = true, true
		}
	}
	for _, m := range transientMarks {
		if strings.Contains(low, m) {
			e.transient = true
		}
	}
	return e
}

// run runs a Slurm command and returns its standard output; the error, a
// *cmdError, carries its standard error.
func run(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "", classify(name, fmt.Sprintf("did not answer within %s (is slurmctld running and SLURM_CONF right?)", commandTimeout), true)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", classify(name, msg, false)
	}
	return stdout.String(), nil
}

// transient reports whether err is a command failure that retrying may
// cure.
func transient(err error) bool {
	var ce *cmdError
	return errors.As(err, &ce) && ce.transient
}

// backoff is a retry schedule: 1 s, doubling, at most max.
type backoff struct {
	next, max time.Duration
}

func (b *backoff) wait() time.Duration {
	if b.next == 0 {
		b.next = time.Second
	}
	d := b.next
	b.next = min(2*b.next, b.max)
	return d
}

// retry runs a Slurm command until it succeeds, fails for a reason
// retrying does not cure, or has failed transiently for longer than
// giveUp (or ctx ends); each transient failure is logged once per message.
func retry(ctx context.Context, giveUp time.Duration, log func(string, ...any), name string, args ...string) (string, error) {
	start := time.Now()
	b := backoff{max: 30 * time.Second}
	last := ""
	for {
		out, err := run(ctx, name, args...)
		if err == nil || !transient(err) || time.Since(start) > giveUp {
			return out, err
		}
		if msg := err.Error(); msg != last {
			last = msg
			log("%v; retrying with backoff for up to %s", err, giveUp)
		}
		select {
		case <-ctx.Done():
			return "", err
		case <-time.After(b.wait()):
		}
	}
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
