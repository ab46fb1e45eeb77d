package report

import (
	"errors"
	"fmt"
)

var (
	// ErrTable is returned when a figure's per-seed table is malformed or
	// lacks the points a claim needs.
	ErrTable = errors.New("report: per-seed table")
	// ErrNotRun is returned when a figure lacks what a claim is about
	// because the profile does not compute it: its x values (the horizons
	// beyond 200 outside the horizon-long profile, say), its panels, a
	// curve in a panel (the smoke profile runs no constant-eps natural
	// REINFORCE), or a trend's second key.
	ErrNotRun = errors.New("not run in this profile")
)

// notComputedError is ErrNotRun with what the profile leaves out.
type notComputedError string

func (e notComputedError) Error() string        { return string(e) }
func (e notComputedError) Is(target error) bool { return target == ErrNotRun }

// notComputed is an ErrNotRun saying what the figure lacks.
func notComputed(format string, args ...any) error {
	return notComputedError(fmt.Sprintf(format, args...))
}

// noCurve is the ErrNotRun of a curve with no points in a panel.
func noCurve(curve, panel string) error {
	return notComputed("curve %q has no points in panel %q: this profile does not compute it there", curve, panel)
}
