package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"zorepro/pipeline/atomicfile"
	"zorepro/pipeline/store"
)

// exportIndexName is the figures directory's record of what the last
// export of each figure task wrote there.
const exportIndexName = ".pipeline-exports.json"

// exportedFile is one file an export wrote: its name in the figures
// directory and the content ID of what was written.
type exportedFile struct {
	Name string `json:"name"`
	ID   string `json:"id"`
}

// exportIndex maps a figure task's path to the files its last export
// wrote. A run that exports a task removes the files that task's previous
// export wrote and this one does not (a figure that stopped producing a
// view, say), as long as the file still holds what was written there and
// no task of this export wrote it: a file a person edited or replaced, and
// files of tasks this run does not export, stay.
type exportIndex map[string][]exportedFile

// readExportIndex reads dir's index; a directory without one has an empty
// index, and an unreadable or malformed one is an error naming the file
// (with an empty index: nothing is pruned).
func readExportIndex(dir string) (exportIndex, error) {
	path := filepath.Join(dir, exportIndexName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return exportIndex{}, nil
	}
	if err != nil {
		return exportIndex{}, fmt.Errorf("export index %s: %w", path, err)
	}
	var idx exportIndex
	err = json.Unmarshal(data, &idx)
	if err == nil && idx == nil {
		err = errors.New("it holds no object")
	}
	if err != nil {
		return exportIndex{}, fmt.Errorf("export index %s is malformed (stale figures were not removed this time; the index is rewritten): %v", path, err)
	}
	return idx, nil
}

// updateExportIndex removes from dir the files the tasks of written no
// longer export (see exportIndex) and records written in dir's index. A run
// that exported nothing leaves the directory as it is.
func updateExportIndex(dir string, written map[string][]exportedFile) error {
	if len(written) == 0 {
		return nil
	}
	idx, err := readExportIndex(dir)
	var errs []error
	if err != nil {
		errs = append(errs, err) // reported; the index is written anew below
	}
	now := map[string]bool{}
	for _, files := range written {
		for _, f := range files {
			now[f.Name] = true
		}
	}
	tasks := make([]string, 0, len(written))
	for task := range written {
		tasks = append(tasks, task)
	}
	slices.Sort(tasks)
	for _, task := range tasks {
		for _, old := range idx[task] {
			if now[old.Name] || old.Name != filepath.Base(old.Name) || old.Name == exportIndexName {
				continue
			}
			path := filepath.Join(dir, old.Name)
			data, err := os.ReadFile(path)
			if err != nil || store.Sum(data).String() != old.ID {
				continue // gone, or no longer what the export wrote
			}
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove %s, which %s no longer exports: %w", path, task, err))
			}
		}
		idx[task] = written[task]
	}
	data, err := json.MarshalIndent(idx, "", "  ")
	if err == nil {
		err = atomicfile.WriteFile(filepath.Join(dir, exportIndexName), append(data, '\n'))
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("export index: %w", err))
	}
	return errors.Join(errs...)
}
