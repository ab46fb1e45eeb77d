// Package seedscsv owns "<figure>-seeds.csv", the per-seed numbers behind
// every plotted point, which the plot stage writes and the report, the
// interim report and the figure audit read: its row type, its one encoder
// and its one parser.
//
// The file has the header panel,curve,seed,x,y and a row per seed, x and
// curve of each panel, in the order the figure aggregated them. Floats are
// written as strconv.FormatFloat 'g' -1 writes them (NaN and ±Inf
// included), so parsing gives back the same bits. The package depends on
// nothing of the plot renderer: a reader's code identity does not hold
// how figures are drawn.
package seedscsv
