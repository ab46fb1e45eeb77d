// Package remotetest holds what the tests of remotes share: a conformance
// suite every writable Backend passes, and an S3 server on loopback (moto's
// moto_server, started for the test and stopped after it).
package remotetest
