package web

import "errors"

// ErrNotFound is returned (and answered 404) for a task, figure or point
// the store does not record.
var ErrNotFound = errors.New("web: not recorded")
