package file_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zorepro/pipeline/remote/file"
	"zorepro/pipeline/remote/remotetest"
)

func TestConformance(t *testing.T) {
	dir := t.TempDir()
	d, err := file.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	remotetest.Conformance(t, d)
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasPrefix(fi.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}
