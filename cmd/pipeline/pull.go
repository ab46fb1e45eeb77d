package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"zorepro/pipeline"
	"zorepro/pipeline/remote"
)

// pullCmd fetches from a remote the recorded results of targets and
// everything upstream that the store lacks.
type pullCmd struct {
	planFlags
	outputFlags
	transferFlags
	trust string
}

func (c *pullCmd) doc() commandDoc {
	return commandDoc{name: "pull", args: "[TARGET...]", summary: "fetch from a remote (--from) the recorded results of targets and everything upstream (all: the profile)",
		detail: "Each task's action is computed here and looked up on the remote: exactly the targets' closure is fetched,\n" +
			"every object checked against its SHA-256 before it enters the store; what the store has is not fetched. With\n" +
			"--trust KEY.pub the index must be signed by that key, and every byte is checked against it. A damaged object\n" +
			"or a task the store records with another output is named, and the store is left as it was. Without --profile,\n" +
			"the profile of the remote's latest push. Ctrl-C stops it within seconds; the same command completes it\n" +
			"without fetching again what it had verified."}
}

func (c *pullCmd) define(f *flagSet) {
	c.planFlags.define(f)
	c.outputFlags.define(f, false)
	c.transferFlags.define(f, "from")
	f.String(&c.trust, "trust", "", "take only what an index signed by one of these public key files lists (comma-separated)")
}

func (c *pullCmd) check(args []string) []string {
	return c.transferFlags.check(args)
}

func (c *pullCmd) run(inv *invocation) (int, error) {
	trust, err := readPublicKeys(c.trust)
	if err != nil {
		return exitInvalid, fmt.Errorf("--trust: %w", err)
	}
	b, err := openRemote(inv.ctx, c.addr)
	if err != nil {
		return exitInvalid, err
	}
	if !c.profileSet {
		if p, ok, err := remote.Latest(inv.ctx, b); err != nil {
			return exitFailed, err
		} else if ok && p.Profile != "" {
			c.profile, c.profileSet = p.Profile, true
		}
	}
	eng, closeLog, err := c.openEngine(inv, openMode{}, pipeline.Options{}, c.targets)
	if err != nil {
		return exitInvalidOr(err), err
	}
	defer closeLog()
	info := map[string]any{"args": append([]string{"pull"}, os.Args[min(len(os.Args), 2):]...)}
	sum, err := remote.Pull(inv.ctx, eng, b, remote.PullOptions{Trust: trust, Jobs: c.jobs, Info: info})
	switch {
	case inv.ctx.Err() != nil:
		return exitInterrupted, errors.New("pull interrupted: nothing was recorded (verified objects wait in the store's incoming/); the same command completes it")
	case errors.Is(err, remote.ErrReadOnly) || errors.Is(err, remote.ErrBadRemote):
		return exitInvalid, err
	case err != nil:
		return exitFailed, err
	}
	if c.json {
		if err := json.NewEncoder(inv.stdout).Encode(sum); err != nil {
			return exitFailed, err
		}
	} else {
		fmt.Fprintf(inv.stdout, "pulled %d tasks (profile %s) from %s", len(sum.Pulled), c.profile, sum.Remote)
		if sum.Run != 0 {
			fmt.Fprintf(inv.stdout, " as run %d", sum.Run)
		}
		fmt.Fprintf(inv.stdout, "; %d were here already\n", len(sum.Present))
		fmt.Fprintf(inv.stdout, "fetched %s of the closure's %s (%d objects; %d store entries downloaded, the rest were here), and %s of index and action entries\n",
			bytesText(sum.FetchedBytes), bytesText(sum.ClosureBytes), sum.Objects, sum.Fetched, bytesText(sum.MetadataBytes))
		if sum.TrustedBy != "" {
			fmt.Fprintf(inv.stdout, "every byte checked against the index signed by %s\n", sum.TrustedBy)
		}
	}
	if n := len(sum.Missing); n > 0 {
		var eg []string
		for _, t := range sum.Missing[:min(3, n)] {
			eg = append(eg, t+" ("+sum.Reasons[t]+")")
		}
		return exitFailed, fmt.Errorf("%d task(s) of the closure are not on the remote for this binary and dag.yaml, e.g. %s", n, strings.Join(eg, "; "))
	}
	return exitOK, nil
}
