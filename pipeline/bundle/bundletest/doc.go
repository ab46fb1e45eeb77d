// Package bundletest helps tests damage bundles on purpose: it rewrites a
// bundle's members, keeping the manifest as it was, so that a test can
// check that import names the member whose bytes no longer match.
package bundletest
