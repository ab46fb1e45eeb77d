package s3_test

import (
	"context"
	"testing"

	"zorepro/pipeline/remote/remotetest"
	"zorepro/pipeline/remote/s3"
)

// The S3 remote against a real S3 server on loopback (moto).
func TestConformance(t *testing.T) {
	remotetest.S3(t, "lab-results")
	b, err := s3.Open(context.Background(), "lab-results", "paper/v1")
	if err != nil {
		t.Fatal(err)
	}
	remotetest.Conformance(t, b)
}
