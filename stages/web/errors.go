package web

import "errors"

// ErrNotAllowed is returned (and answered 403) for a re-execution a server
// not started with Options.AllowReexecute is asked for.
var ErrNotAllowed = errors.New("web: not allowed")

// ErrBusy is returned (and answered 409) for a re-execution asked for
// while one runs.
var ErrBusy = errors.New("web: busy")

// ErrNotFound is returned (and answered 404) for a task, figure or point
// the store does not record.
var ErrNotFound = errors.New("web: not recorded")
