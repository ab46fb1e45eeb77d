package interim

import "errors"

// ErrNoReport is returned by Compute when the plan has no report task of
// the name given.
var ErrNoReport = errors.New("interim: no report task")
