package web_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"zorepro/pipeline/remote/file"
	"zorepro/pipeline/remote/remotetest"
	"zorepro/pipeline/remote/web"
)

// A directory remote served by a plain static file server reads as the
// directory does, and takes no writes.
func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	d, err := file.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	remotetest.Conformance(t, d)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	h, err := web.Open(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	remotetest.ReadOnly(t, h)
}
