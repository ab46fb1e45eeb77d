package algos

import (
	"errors"
	"fmt"
	"math"
)

// Checks collects the invalid fields of a configuration for its Validate,
// every one at once, each error wrapping the algorithm's sentinel.
type Checks struct {
	sentinel error
	errs     []error
}

// NewChecks returns Checks whose errors wrap sentinel (e.g. ars.ErrConfig).
func NewChecks(sentinel error) *Checks { return &Checks{sentinel: sentinel} }

// Positive requires a finite v > 0.
func (c *Checks) Positive(name string, v float64) {
	if !(v > 0) || math.IsInf(v, 0) {
		c.Failf("%s = %v, want finite > 0", name, v)
	}
}

// Count requires n ≥ 1.
func (c *Checks) Count(name string, n int) {
	if n < 1 {
		c.Failf("%s = %d, want > 0", name, n)
	}
}

// Failf records a problem the other checks do not express.
func (c *Checks) Failf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("%w: %s", c.sentinel, fmt.Sprintf(format, args...)))
}

// Err returns the problems joined, or nil.
func (c *Checks) Err() error { return errors.Join(c.errs...) }
