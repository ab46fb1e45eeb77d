// Package file is a remote in a directory (file:///dir): the layout of
// package remote as files below the directory, for a shared file system
// or a disk carried between machines.
//
// Create publishes a temporary file with link(2), which fails when the
// name exists, so that two writers never replace each other's object and
// a reader sees a whole object or none; Swap holds an exclusive lock on
// the directory while it compares and replaces. Temporary files carry the
// atomicfile prefix and lock, so that one a killed writer left is told
// from one being written.
package file
