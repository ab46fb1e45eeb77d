// Package remotetest holds what the tests of remotes share: a conformance
// suite every writable Backend passes, and an S3 server on loopback (moto,
// served as moto_server serves it but one request at a time, started for
// the test and stopped after it).
package remotetest
