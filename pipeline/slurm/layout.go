package slurm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"zorepro/pipeline/atomicfile"
)

// A build directory (<store>/slurm/runs/<build>) is the meeting point of a
// coordinator and the runner jobs that serve it, all on the shared file
// system. Its name is the build's content (binary copy, dag copy, CPUs
// per job), so that a restarted coordinator of the same build shares it
// with the runners an earlier one started, and a runner never takes an
// attempt of another build. Within it:
//
//	queue/<ticket>            an attempt waiting for a runner (content: its spec path)
//	claimed/<runner>/<ticket> taken by a runner (moved there by rename: one runner wins)
//	ended/<ticket>            the end marker a runner writes when the attempt has ended
//	cancel/<ticket>           the coordinator's request to stop the attempt
//
// A ticket's name orders the queue and is unique in the store:
// "<sequence>-<action ID>-<attempt number>".
type buildDir string

func (b buildDir) queue() string                { return filepath.Join(string(b), "queue") }
func (b buildDir) claimed(runner string) string { return filepath.Join(string(b), "claimed", runner) }
func (b buildDir) ended(ticket string) string   { return filepath.Join(string(b), "ended", ticket) }
func (b buildDir) cancel(ticket string) string  { return filepath.Join(string(b), "cancel", ticket) }

// make creates the build directory's subdirectories.
func (b buildDir) make() error {
	for _, d := range []string{"queue", "claimed", "ended", "cancel"} {
		if err := os.MkdirAll(filepath.Join(string(b), d), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// names lists a directory's entries in name order (none if it is missing).
func names(dir string) []string {
	des, _ := os.ReadDir(dir)
	out := make([]string, 0, len(des))
	for _, de := range des {
		if !strings.HasPrefix(de.Name(), ".") {
			out = append(out, de.Name())
		}
	}
	return out
}

// runners lists the runners with a claimed directory.
func (b buildDir) runners() []string { return names(filepath.Join(string(b), "claimed")) }

// enqueue publishes a ticket for the attempt whose spec file is spec.
func (b buildDir) enqueue(ticket, spec string) error {
	return publish(filepath.Join(b.queue(), ticket), []byte(spec))
}

// publish writes a small file whole under its name (a temporary file
// renamed), without the fsyncs of atomicfile: tickets and markers only
// matter while their jobs run, and a reader must never see half of one.
func publish(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), atomicfile.TempPrefix+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// withdraw removes a ticket from the queue; it reports false if a runner
// has claimed it (or it was never queued).
func (b buildDir) withdraw(ticket string) bool {
	return os.Remove(filepath.Join(b.queue(), ticket)) == nil
}

// marker is what a runner records when an attempt has ended.
type marker struct {
	State  string `json:"state"`            // COMPLETED, FAILED, INTERRUPTED, CANCELLED, REFUSED, REQUEUED
	Detail string `json:"detail,omitempty"` // the worker's error, if any
	Runner string `json:"runner"`           // "<job>_<index>"
	Node   string `json:"node"`
	// Began and Ended are when the worker started and finished the
	// attempt (Unix nanoseconds): the executor's overhead is the rest.
	Began int64 `json:"began"`
	Ended int64 `json:"ended"`
	// Free is when the runner became free to take it (its previous
	// attempt's end, or its start): the claim's own delay is the part of
	// Began - Free after the ticket was queued.
	Free int64 `json:"free"`
}

// Marker states a runner records besides Slurm's own.
const (
	stateCompleted   = "COMPLETED"
	stateFailed      = "FAILED"
	stateInterrupted = "INTERRUPTED" // the runner was signalled (scancel, a time limit)
	stateCancelled   = "CANCELLED"   // the coordinator asked (cancel/<ticket>)
	stateRequeued    = "REQUEUED"    // its runner was requeued before it ended
)

func (b buildDir) writeMarker(ticket string, m marker) error {
	data, _ := json.Marshal(m)
	return publish(b.ended(ticket), data)
}

// readMarker reads a ticket's end marker; ok is false if there is none.
func (b buildDir) readMarker(ticket string) (m marker, ok bool, err error) {
	data, err := os.ReadFile(b.ended(ticket))
	if errors.Is(err, fs.ErrNotExist) {
		return marker{}, false, nil
	}
	if err != nil {
		return marker{}, false, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return marker{}, false, fmt.Errorf("end marker %s: %w", b.ended(ticket), err)
	}
	return m, true, nil
}

// claimedTickets maps each ticket claimed by one of runners to its runner.
func (b buildDir) claimedTickets(runners []string) map[string]string {
	out := map[string]string{}
	for _, r := range runners {
		for _, t := range names(b.claimed(r)) {
			out[t] = r
		}
	}
	return out
}

// specOf reads the spec path a claimed ticket names.
func (b buildDir) specOf(runner, ticket string) (string, error) {
	data, err := os.ReadFile(filepath.Join(b.claimed(runner), ticket))
	return string(data), err
}

// buildDirs lists the build directories under root.
func buildDirs(root string) []buildDir {
	var out []buildDir
	for _, n := range names(root) {
		out = append(out, buildDir(filepath.Join(root, n)))
	}
	slices.Sort(out)
	return out
}
