// Package generate is the generate stage kind: it draws one problem
// instance (e.g. a linear-regression instance for one d and seed) from the
// task's streams and publishes it as the output "data".
package generate
