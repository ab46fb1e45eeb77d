package report

import "errors"

var (
	// ErrTable is returned when a figure's per-seed table is malformed or
	// lacks the points a claim needs.
	ErrTable = errors.New("report: per-seed table")
)
