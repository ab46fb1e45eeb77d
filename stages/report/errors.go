package report

import "errors"

var (
	// ErrTable is returned when a figure's per-seed table is malformed or
	// lacks the points a claim needs.
	ErrTable = errors.New("report: per-seed table")
	// ErrNotRun is returned when a figure has none of the x values a claim
	// is about: the profile does not compute them (the horizons beyond 200
	// outside the horizon-long profile, say).
	ErrNotRun = errors.New("not run in this profile")
)
