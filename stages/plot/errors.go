package plot

import "errors"

var (
	// ErrUnknownBand is returned by Aggregate when the band kind is neither
	// BandMinMaxStd nor BandStdErr, or AggregateOptions.LoFloor is NaN.
	ErrUnknownBand = errors.New("plot: unknown band")

	// ErrBadSeries is returned by Aggregate when a series is unusable on its
	// own: X and Y differ in length, X is empty, or X is not finite and
	// strictly increasing.
	ErrBadSeries = errors.New("plot: bad series")

	// ErrGridMismatch is returned by Aggregate when a seed's X grid differs
	// from the grid of the first seed of its (panel, curve) group.
	ErrGridMismatch = errors.New("plot: x grids differ between seeds")

	// ErrDuplicateSeed is returned by Aggregate when a (panel, curve) group
	// holds the same seed twice.
	ErrDuplicateSeed = errors.New("plot: duplicate seed")

	// ErrNoSeries is returned by Aggregate when it is given no series at all.
	ErrNoSeries = errors.New("plot: no series")

	// ErrBadSpec is returned by Render when the Spec or the curves are
	// inconsistent: unknown or duplicate keys, bad limits, missing caption,
	// mismatched curve lengths, a panel without curves, or a figure too
	// small for its title, legend and caption.
	ErrBadSpec = errors.New("plot: invalid figure")
)
