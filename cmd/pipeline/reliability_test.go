package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/codeid"
	"zorepro/pipeline/events"
	"zorepro/pipeline/pipelinetest"
	"zorepro/pipeline/store"
)

// stubCode is a code identity for in-process tests (the test binary has no
// stamped manifest).
type stubCode struct{}

func (stubCode) Closure(...string) (codeid.Identity, error) {
	return codeid.Identity{ID: "xxh64-0000000000000000"}, nil
}
func (stubCode) BuildLines() []string { return nil }

// useStubCode replaces the code identity for the test.
func useStubCode(t *testing.T) {
	saved := codeIdentity
	codeIdentity = func() (pipeline.CodeIdentity, error) { return stubCode{}, nil }
	t.Cleanup(func() { codeIdentity = saved })
}

// snapshotDir maps every path under root to its mode and content.
func snapshotDir(t *testing.T, root string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		v := info.Mode().String()
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		snap[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestCorruptEventLog damages events.db of a store that has runs and
// artifacts. `pipeline run` and `pipeline status` must exit 1 with a
// message naming the file and saying how to recover, and leave the file
// and the rest of the store exactly as they were: a damaged log is never
// recreated, and nothing is deleted.
func TestCorruptEventLog(t *testing.T) {
	t.Parallel() // no clock in its checks; see tests.md
	useStubCode(t)
	dagFile, err := filepath.Abs("../../dag.yaml")
	if err != nil {
		t.Fatal(err)
	}
	damage := map[string]func(t *testing.T, path string){
		"truncated": func(t *testing.T, path string) {
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, info.Size()/2); err != nil {
				t.Fatal(err)
			}
		},
		"garbage": func(t *testing.T, path string) {
			rng := rand.New(rand.NewPCG(3, 4))
			b := make([]byte, 32<<10)
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, spoil := range damage {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			storeDir := filepath.Join(dir, "store")
			dbPath := filepath.Join(storeDir, "events.db")
			// A store with artifacts and a log with a recorded run.
			st, err := store.Open(storeDir)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{"one", "two", "three"} {
				if _, err := st.Put([]byte(s)); err != nil {
					t.Fatal(err)
				}
			}
			log, err := events.Open(dbPath, events.Options{Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			run, err := log.BeginRun(json.RawMessage(`{}`), 1)
			if err != nil {
				t.Fatal(err)
			}
			w := log.NewWriter(events.WriterOptions{})
			for i := range 200 {
				w.Append(events.Event{Type: events.TypeNote, Run: run, Task: "t", Data: json.RawMessage(`{"i":` + strconv.Itoa(i) + `}`)})
			}
			if err := log.Close(); err != nil {
				t.Fatal(err)
			}
			spoil(t, dbPath)
			before := snapshotDir(t, dir)

			for _, cmd := range []string{"run", "status"} {
				var stdout, stderr bytes.Buffer
				code := Main(context.Background(), withFlags([]string{cmd}, "--dag", dagFile, "--profile", "smoke", "--jobs", "1",
					"--store", storeDir, "--figures", filepath.Join(dir, "figures")), &stdout, &stderr)
				t.Logf("pipeline %s: exit %d, stderr: %s", cmd, code, stderr.String())
				if code != exitFailed {
					t.Errorf("pipeline %s: exit code %d, want %d", cmd, code, exitFailed)
				}
				for _, want := range []string{dbPath + " is not a valid event log", "The file was not modified",
					"restore it from a backup", "move it aside (e.g. mv " + dbPath + " " + dbPath + ".corrupt)",
					"artifacts in the store are kept"} {
					if !bytes.Contains(stderr.Bytes(), []byte(want)) {
						t.Errorf("pipeline %s: stderr lacks %q", cmd, want)
					}
				}
				after := snapshotDir(t, dir)
				for p, v := range before {
					if after[p] != v {
						t.Errorf("pipeline %s changed or removed %s", cmd, p)
					}
				}
				for p := range after {
					if _, ok := before[p]; !ok {
						t.Errorf("pipeline %s created %s", cmd, p)
					}
				}
			}
		})
	}
}

// enospcFile is a store temp file on a full disk.
type enospcFile struct{ *os.File }

func (f enospcFile) Write([]byte) (int, error) {
	return 0, &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
}

// TestFullDiskStopsRun runs the smoke profile on a store whose disk is
// full: `pipeline run` stops after the first failed write and exits 1 with
// a message naming the file and the OS error and saying how to resume; the
// store is left without partial entries and the log records the run.
func TestFullDiskStopsRun(t *testing.T) {
	useStubCode(t)
	storeOptions = store.Options{CreateTemp: func(dir, pattern string) (store.TempFile, error) {
		f, err := os.CreateTemp(dir, pattern)
		if err != nil {
			return nil, err
		}
		return enospcFile{f}, nil
	}}
	t.Cleanup(func() { storeOptions = store.Options{} })
	dagFile, err := filepath.Abs("../../dag.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	storeDir := filepath.Join(dir, "store")
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"run", "--dag", dagFile, "--profile", "smoke", "--jobs", "1",
		"--store", storeDir, "--figures", filepath.Join(dir, "figures")}, &stdout, &stderr)
	t.Logf("exit %d, stderr:\n%s", code, stderr.String())
	if code != exitFailed {
		t.Errorf("exit code %d, want %d", code, exitFailed)
	}
	msg := stderr.String()
	for _, want := range []string{"\npipeline: write failed: store: put xxh64-", filepath.Join(storeDir, "tmp", "put-"),
		"no space left on device", "The run was stopped; progress up to the last successful write is kept",
		"run again to resume"} {
		if !strings.Contains("\n"+msg, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if strings.Contains(msg, "pipeline: pipeline:") {
		t.Error("stderr repeats the pipeline: prefix")
	}
	// One task failed writing; the run then stopped: no other task ran or
	// was marked skipped.
	if n := strings.Count("\n"+msg, "\nfailed "); n != 1 || strings.Contains(msg, "skipped") {
		t.Errorf("%d tasks failed and %d were skipped; want one failure and the run stopped", n, strings.Count(msg, "skipped"))
	}
	if tmp, _ := os.ReadDir(filepath.Join(storeDir, "tmp")); len(tmp) != 0 {
		t.Errorf("temp files left: %v", tmp)
	}
	if runs := pipelinetest.ReadLog(t, storeDir, (*events.Log).Runs); len(runs) != 1 || runs[0].State != events.RunInterrupted {
		t.Fatalf("recorded runs %+v; want one interrupted run", runs)
	}
}
