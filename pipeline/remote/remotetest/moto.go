package remotetest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// motoPython finds a Python that has moto (moto_server's own, which these
// machines' pyenv provides).
func motoPython() (string, error) {
	candidates := []string{"python3"}
	for _, dir := range []string{"/root/.pyenv/shims", filepath.Join(os.Getenv("HOME"), ".pyenv/shims")} {
		candidates = append(candidates, filepath.Join(dir, "python3"))
	}
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil && exec.Command(p, "-c", "import moto.server").Run() == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no Python with moto found (moto_server's; pip install 'moto[server]'; .ci/run checks for it)")
}

// serveMoto is moto_server's main with one difference: requests are served
// one at a time. moto's threaded server checks a conditional write and
// makes it in two steps, so that two racing writers can both succeed,
// which S3 never allows; served in turn, moto is S3 as the remote relies
// on it.
const serveMoto = `import sys
from werkzeug.serving import run_simple
from moto.server import DomainDispatcherApplication, create_backend_app
run_simple(sys.argv[1], int(sys.argv[2]), DomainDispatcherApplication(create_backend_app), threaded=False)
`

// S3 starts an S3 server (moto) on loopback for the test, creates bucket in it,
// points the AWS environment variables at it (t.Setenv) and returns its
// endpoint. The server stops when the test ends. A machine without moto
// fails the test: the S3 remote must be tested.
func S3(t *testing.T, bucket string) string {
	t.Helper()
	python, err := motoPython()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(python, "-c", serveMoto, "127.0.0.1", strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	endpoint := "http://127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(endpoint + "/moto-api/"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("moto_server at %s did not answer within 30 s", endpoint)
		}
	}
	for k, v := range map[string]string{"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
		"AWS_REGION": "us-east-1", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull} {
		t.Setenv(k, v)
	}
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	if _, err := client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("create bucket %s: %v", bucket, err)
	}
	return endpoint
}
