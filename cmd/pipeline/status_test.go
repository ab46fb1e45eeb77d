package main

import (
	"regexp"
	"strings"
	"testing"
)

// status --times says what is left as the dry run predicts it: nothing on
// a complete smoke store; for the quick profile on the same store (its
// tasks share paths with smoke's, few of them its own), every stage it
// would run with its task time left, and the total.
func TestStatusTimesLeft(t *testing.T) {
	bin, root, _, common := smokeStore(t)
	args := append([]string{"status", "--times"}, withoutFigures(common)...)
	out, code := cliStdout(t, bin, root, args...)
	if code != 0 || !strings.Contains(out, "left: nothing; every task is recorded under its current identity") {
		t.Fatalf("status --times on a complete smoke store: exit %d\n%s", code, out)
	}
	for i := range args {
		if i > 0 && args[i-1] == "--profile" {
			args[i] = "quick"
		}
	}
	out, code = cliStdout(t, bin, root, args...)
	if code != 0 {
		t.Fatalf("status --times --profile quick: exit %d\n%s", code, out)
	}
	// quick's tune/linreg runs (60 trials at other budgets than smoke's),
	// timed by the quick reference runs where the store has none.
	if !regexp.MustCompile(`(?m)^tune/linreg +\d+/\d+ +\S+ +\S+ +~\d`).MatchString(out) {
		t.Errorf("status --times --profile quick: no task time left for tune/linreg\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^left: \d+ tasks, ~\S+ of task time .* ~\S+ of wall time on 2 workers`).MatchString(out) {
		t.Errorf("status --times --profile quick: no total left\n%s", out)
	}
}
