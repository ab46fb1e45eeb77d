package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"zorepro/pipeline"
	"zorepro/pipeline/bundle"
	"zorepro/pipeline/codeid"
)

// exportCmd writes the recorded results of targets and everything
// upstream to one checksummed bundle.
type exportCmd struct {
	planFlags
	outputFlags
	to         string
	volumeSize int64
	targets    []string
}

func (c *exportCmd) doc() commandDoc {
	return commandDoc{name: "export", args: "TARGET...", summary: "write the recorded results of targets and everything upstream to one checksummed file (--to)",
		detail: "The bundle holds every output and the events that audit, replay and verify need, tuning trials included.\n" +
			"Every task of the closure must be recorded (run it first). --json prints what was written."}
}

func (c *exportCmd) define(f *flagSet) {
	c.planFlags.define(f)
	c.outputFlags.define(f, false)
	f.String(&c.to, "to", "", "the bundle file to write")
	f.Size(&c.volumeSize, "volume-size", bundle.MinVolumeSize, "1MiB", "cut the bundle into volumes FILE.001, FILE.002, … of at most this size (e.g. 1900MiB: a GitHub release asset must be under 2 GiB) and write their index to FILE; import takes FILE")
}

func (c *exportCmd) check(args []string) []string {
	var p []string
	if len(args) == 0 {
		p = append(p, "pipeline export: takes one or more TARGETs (stages, task paths or prefixes)")
	}
	if c.to == "" {
		p = append(p, "pipeline export: --to FILE is required")
	}
	c.targets = args
	return p
}

// cmdExport writes a bundle of the targets and their whole upstream
// closure, as the store records them, to --to.
func (c *exportCmd) run(inv *invocation) (int, error) {
	return c.reading(inv, func(eng *pipeline.Engine) (int, error) { return c.export(inv, eng) })
}

func (c *exportCmd) export(inv *invocation, eng *pipeline.Engine) (int, error) {
	stdout := inv.stdout
	only, err := eng.Plan.Only(c.targets)
	if err != nil {
		return exitInvalid, err
	}
	sum, err := bundle.Export(inv.ctx, eng, only.Tasks, bundle.Options{Code: codeid.Stamp, Profile: c.profile, Targets: c.targets, File: c.to, VolumeSize: c.volumeSize})
	switch {
	case inv.ctx.Err() != nil:
		return exitInterrupted, fmt.Errorf("export interrupted: nothing was written to %s; the same command starts it again", c.to)
	case errors.Is(err, bundle.ErrNotRecorded):
		return exitInvalid, err
	case err != nil:
		return exitFailed, err
	}
	if c.json {
		return exitOK, json.NewEncoder(stdout).Encode(sum)
	}
	fmt.Fprintf(stdout, "exported %d tasks (profile %s, %d store entries, %s uncompressed) to %s: %s\n",
		sum.Tasks, c.profile, sum.Entries, bytesText(sum.EntryBytes), sum.File, bytesText(sum.Bytes))
	if n := len(sum.Volumes); n > 0 {
		fmt.Fprintf(stdout, "in %d volumes of at most %s, %s to %s; %s is their index (import takes it, with the volumes beside it)\n",
			n, bytesText(c.volumeSize), sum.Volumes[0].File, sum.Volumes[n-1].File, sum.File)
	}
	return exitOK, nil
}
