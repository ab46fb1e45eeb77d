// Package web reads a remote from a static web host (https:// or http://):
// the layout of package remote served as plain files by any web server, a
// bucket's public endpoint or a CDN. It only reads: writes return
// remote.ErrReadOnly, and it cannot list (gc needs a listing backend).
//
// Every object a pull takes is checked against its SHA-256 by package
// remote, so the host (and everything between it and the reader) need not
// be trusted for integrity; with trusted keys, nor for authenticity.
package web
