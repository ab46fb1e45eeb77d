package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"zorepro/pipeline/crashpoint"
	"zorepro/pipeline/dag"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailed      = 1
	exitInvalid     = 2
	exitInterrupted = 130
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if err := crashpoint.WriteCounts(); err != nil { // a test seam; see package crashpoint
		fmt.Fprintln(os.Stderr, "pipeline:", err)
	}
	os.Exit(code)
}

// Main runs one invocation and returns its exit code. A command that
// fails after being asked for JSON (--json, --jsonl) and printed none
// prints {"error", "exit_code"} on stdout, as well as the message on
// stderr.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd, err := parse(args, stderr)
	if err != nil {
		var hr *helpRequest
		if errors.As(err, &hr) {
			fmt.Fprintln(stdout, hr.msg)
			return exitOK
		}
		fmt.Fprintln(stderr, err)
		if argsWantJSON(args) {
			jsonError(stdout, err, exitInvalid)
		}
		return exitInvalid
	}
	out := &countingWriter{w: stdout}
	code, err := cmd.run(&invocation{name: cmd.doc().name, ctx: ctx, stdout: out, stderr: stderr})
	if err != nil {
		fmt.Fprintln(stderr, "pipeline:", err)
		switch {
		case errors.Is(err, errPlanningInterrupted):
			code = exitInterrupted
		case errors.Is(err, dag.ErrInvalid):
			code = exitInvalid
		case code == exitOK:
			code = exitFailed
		}
		if j, ok := cmd.(interface{ wantsJSON() bool }); ok && j.wantsJSON() && out.n == 0 {
			jsonError(stdout, err, code)
		}
	}
	return code
}

// jsonError prints a failed command's error as the one JSON document a
// --json (or --jsonl) caller reads when the command printed none.
func jsonError(w io.Writer, err error, code int) {
	json.NewEncoder(w).Encode(map[string]any{"error": err.Error(), "exit_code": code})
}

// argsWantJSON reports whether a command line that failed to parse asked
// for JSON output.
func argsWantJSON(args []string) bool {
	for _, a := range args {
		if a == "--json" || a == "--jsonl" || a == "--json=true" || a == "--jsonl=true" {
			return true
		}
	}
	return false
}

// countingWriter counts what a command writes to stdout.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
