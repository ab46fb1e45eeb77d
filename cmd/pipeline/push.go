package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"zorepro/pipeline"
	"zorepro/pipeline/codeid"
	"zorepro/pipeline/remote"
)

// pushCmd writes the recorded results of targets and everything upstream
// to a remote.
type pushCmd struct {
	planFlags
	outputFlags
	transferFlags
	sign string
}

func (c *pushCmd) doc() commandDoc {
	return commandDoc{name: "push", args: "[TARGET...]", summary: "write the recorded results of targets and everything upstream (all: the profile) to a remote (--to)",
		detail: "Objects go first (by SHA-256, each once: what the remote has is not sent again), then each task's action\n" +
			"entry, then the index, merged with what other pushers wrote meanwhile and signed with --sign KEY. Every task\n" +
			"must be recorded for this binary and dag.yaml. A task the remote holds with another output is refused and\n" +
			"named. Ctrl-C stops it within seconds; the same command completes it."}
}

func (c *pushCmd) define(f *flagSet) {
	c.planFlags.define(f)
	c.outputFlags.define(f, false)
	c.transferFlags.define(f, "to")
	f.String(&c.sign, "sign", "", "sign the index with this key file (pipeline keygen makes one)")
}

func (c *pushCmd) check(args []string) []string {
	return c.transferFlags.check(args)
}

func (c *pushCmd) run(inv *invocation) (int, error) {
	var key *remote.Key
	if c.sign != "" {
		var err error
		if key, err = readKey(c.sign); err != nil {
			return exitInvalid, fmt.Errorf("--sign: %w", err)
		}
	}
	b, err := openRemote(inv.ctx, c.addr)
	if err != nil {
		return exitInvalid, err
	}
	eng, closeLog, err := c.openEngine(inv, inspect, pipeline.Options{}, c.targets)
	if err != nil {
		return exitInvalidOr(err), err
	}
	defer closeLog()
	sum, err := remote.Push(inv.ctx, eng, b, remote.PushOptions{Jobs: c.jobs, Sign: key,
		About: remote.Pushed{Revision: readVersion().Revision, Code: codeid.Stamp, Profile: c.profile, Targets: c.targets}})
	switch {
	case inv.ctx.Err() != nil:
		return exitInterrupted, fmt.Errorf("push interrupted: the objects written are whole and the index unchanged; the same command completes it")
	case errors.Is(err, remote.ErrNotRecorded) || errors.Is(err, remote.ErrReadOnly):
		return exitInvalid, err
	case err != nil:
		return exitFailed, err
	}
	if c.json {
		return exitOK, json.NewEncoder(inv.stdout).Encode(sum)
	}
	fmt.Fprintf(inv.stdout, "pushed %d of %d tasks (profile %s) to %s; %d were there already\n", len(sum.Added), sum.Tasks, c.profile, sum.Remote, sum.Present)
	fmt.Fprintf(inv.stdout, "objects: %d uploaded (%s) of the closure's %d (%s)\n", sum.Uploaded, bytesText(sum.UploadedBytes), sum.Objects, bytesText(sum.Bytes))
	if sum.SignedBy != "" {
		fmt.Fprintf(inv.stdout, "index signed by %s\n", sum.SignedBy)
	}
	return exitOK, nil
}
