// Package pipelinetest provides the engine's test doubles, shared by the
// tests of the engine, of provenance and of the CLI: a code identity whose
// packages can be "edited", a stage kind that publishes a value derived
// from its parameters alone, and readers of a store's event log.
package pipelinetest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"zorepro/pipeline/codeid"
	"zorepro/pipeline/events"
	"zorepro/pipeline/task"
)

// FakeCode gives every package a version; Bump is an edit of a package.
// Its zero value is not usable: make one with NewFakeCode.
type FakeCode struct {
	mu       sync.Mutex
	versions map[string]int
}

// NewFakeCode returns a FakeCode with every package at version 0.
func NewFakeCode() *FakeCode { return &FakeCode{versions: map[string]int{}} }

// Closure implements pipeline.CodeIdentity: a "pkg <path> v<version>" line
// per root.
func (f *FakeCode) Closure(roots ...string) (codeid.Identity, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var lines []string
	for _, r := range roots {
		lines = append(lines, fmt.Sprintf("pkg %s v%d", r, f.versions[r]))
	}
	sort.Strings(lines)
	return codeid.Identity{ID: fmt.Sprintf("xxh64-%016x", xxhash.Sum64String(strings.Join(lines, "\n"))), Lines: lines}, nil
}

// BuildLines implements pipeline.CodeIdentity.
func (f *FakeCode) BuildLines() []string { return []string{"tags "} }

// Bump edits a package: its version goes up by one.
func (f *FakeCode) Bump(pkg string) {
	f.mu.Lock()
	f.versions[pkg]++
	f.mu.Unlock()
}

// SrcKind is the stage kind "src": it publishes "data", the parameter
// "value" (modulo "mod" when given), and nothing random.
type SrcKind struct{}

// Name implements task.Kind.
func (SrcKind) Name() string { return "src" }

// Version implements task.Kind.
func (SrcKind) Version() int { return 1 }

// Slots implements task.Kind: no inputs.
func (SrcKind) Slots() []task.Slot { return nil }

// Plan implements task.Kind.
func (SrcKind) Plan(p *task.Params) task.Runner {
	v := p.Float("value", task.Required())
	mod := p.Float("mod", task.Default(0.0), task.Min(0))
	return &srcRunner{v: v, mod: mod}
}

type srcRunner struct{ v, mod float64 }

func (r *srcRunner) Components() []any { return []any{bytes.Buffer{}} } // package "bytes"
func (r *srcRunner) Run(ctx context.Context, env task.Env) error {
	v := r.v
	if r.mod > 0 {
		v = math.Mod(v, r.mod)
	}
	return env.Output("data", []byte(task.FormatFloat(v)))
}

// ReadLog opens the event log of the store at dir read-only (waiting up to
// 5 s for a run that holds it), returns what read gives and closes the log;
// it fails t on an error: ReadLog(t, dir, (*events.Log).Runs).
func ReadLog[T any](t testing.TB, dir string, read func(*events.Log) (T, error)) T {
	t.Helper()
	log, err := events.Open(filepath.Join(dir, "events.db"), events.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	v, err := read(log)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// LastStates returns the latest state record of every task in the event
// log of the store at dir, by task path (read-only; the log must not be
// held by a run).
func LastStates(t testing.TB, dir string) map[string]events.StateRecord {
	t.Helper()
	states := ReadLog(t, dir, (*events.Log).LastStates)
	out := map[string]events.StateRecord{}
	for _, s := range states {
		out[s.Task] = s
	}
	return out
}
