// Package atomicfile publishes files so that a reader, or a process
// restarted after a crash, finds either the old content or the new, never a
// partial file: write a temporary file in the same directory, fsync it,
// rename it over the destination, fsync the directory.
//
// It is a leaf (it imports nothing from the module): the store, the event
// log, the code manifest generator and the figure export share it.
package atomicfile
