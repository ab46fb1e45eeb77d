// Package curvecsv owns "curve.csv", the learning curve an evaluate task
// hands to the plots (and to the browser view): its row type, its one
// parser and a writer (Curve.Bytes, which the baseline stage writes with).
//
// The file has the header iteration,samples,<metric>... and one row per
// evaluated snapshot, in the trajectory's order. Iterations and samples are
// decimal integers; metric values are written as strconv.FormatFloat 'g' -1
// writes them (NaN and ±Inf included), so parsing gives back the same bits.
//
// The evaluate stage (stages/evaluate) keeps a writer of its own: moving it
// here would change the code identity of every evaluate task and with it
// the reuse of stores already computed. This package's tests run the evaluate
// stage's writer and check that Parse reads back exactly what it wrote.
package curvecsv
