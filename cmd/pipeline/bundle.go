package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"zorepro/pipeline"
	"zorepro/pipeline/bundle"
	"zorepro/pipeline/codeid"
	"zorepro/pipeline/dag"
)

// cmdExport writes a bundle of the targets and their whole upstream
// closure, as the store records them, to --to.
func cmdExport(c *Config, eng *pipeline.Engine, stdout io.Writer) (int, error) {
	only, err := eng.Plan.Only(c.Args)
	if err != nil {
		return exitInvalid, err
	}
	sum, err := bundle.Export(c.context(), eng, only.Tasks, bundle.Options{Code: codeid.Stamp, Profile: c.Profile, Targets: c.Args, File: c.BundleFile, VolumeSize: c.VolumeSize})
	switch {
	case c.context().Err() != nil:
		return exitInterrupted, fmt.Errorf("export interrupted: nothing was written to %s; the same command starts it again", c.BundleFile)
	case errors.Is(err, bundle.ErrNotRecorded):
		return exitInvalid, err
	case err != nil:
		return exitFailed, err
	}
	if c.JSON {
		return exitOK, json.NewEncoder(stdout).Encode(sum)
	}
	fmt.Fprintf(stdout, "exported %d tasks (profile %s, %d store entries, %s uncompressed) to %s: %s\n",
		sum.Tasks, c.Profile, sum.Entries, bytesText(sum.EntryBytes), sum.File, bytesText(sum.Bytes))
	if n := len(sum.Volumes); n > 0 {
		fmt.Fprintf(stdout, "in %d volumes of at most %s, %s to %s; %s is their index (import takes it, with the volumes beside it)\n",
			n, bytesText(c.VolumeSize), sum.Volumes[0].File, sum.Volumes[n-1].File, sum.File)
	}
	return exitOK, nil
}

// cmdImport merges a bundle into the store: under the bundle's profile
// unless --profile says otherwise, each task whose action this binary and
// dag.yaml give it too.
func cmdImport(c *Config, stdout io.Writer) (int, error) {
	var closeLog func()
	defer func() {
		if closeLog != nil {
			closeLog()
		}
	}()
	open := func(m *bundle.Manifest) (*pipeline.Engine, error) {
		if !c.ProfileSet {
			c.Profile, c.ProfileSet = m.Profile, true
		}
		eng, cl, err := openEngine(c, false)
		closeLog = cl
		return eng, err
	}
	path, _ := filepath.Abs(c.Args[0])
	info := map[string]any{"import": path, "args": append([]string{"import"}, os.Args[min(len(os.Args), 2):]...)}
	sum, err := bundle.Import(c.context(), c.Args[0], open, info)
	switch {
	case c.context().Err() != nil:
		return exitInterrupted, errors.New("import interrupted: nothing was recorded (entries already stored stay, complete); the same command completes it")
	case errors.Is(err, bundle.ErrBundle) || errors.Is(err, os.ErrNotExist):
		return exitInvalid, err
	case errors.Is(err, dag.ErrInvalid):
		return exitInvalid, err
	case err != nil:
		return exitFailed, err // the store refused it (diverged, locked, corrupt) or a write failed
	}
	if c.JSON {
		return exitOK, json.NewEncoder(stdout).Encode(sum)
	}
	fmt.Fprintf(stdout, "imported %d tasks (%d store entries) from %s as run %d; %d were already recorded\n",
		len(sum.Imported), sum.Entries, sum.File, sum.Run, len(sum.Present))
	if n := len(sum.Other); n > 0 {
		fmt.Fprintf(stdout, "%d task(s) left out: this binary and dag.yaml give them another action (the bundle's code identity is %s), e.g. %s\n", n, sum.Code, strings.Join(sum.Other[:min(3, n)], ", "))
	}
	if n := len(sum.Unplanned); n > 0 {
		fmt.Fprintf(stdout, "%d task(s) left out: not in this dag's profile %s, e.g. %s\n", n, c.Profile, strings.Join(sum.Unplanned[:min(3, n)], ", "))
	}
	return exitOK, nil
}
