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
	"sync"
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
	cmd, endpoint, err := startMoto()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for k, v := range awsEnv(endpoint) {
		t.Setenv(k, v)
	}
	createBucket(t, bucket)
	return endpoint
}

// shared is the server of SharedS3.
var shared struct {
	sync.Mutex
	cmd      *exec.Cmd
	endpoint string
	err      error
}

// SharedS3 is S3 for tests that run in parallel (t.Parallel, which
// t.Setenv refuses): one server for the whole test binary, started by the
// first caller, with the AWS environment variables set for the process
// (os.Setenv; they mean nothing to tests that use no S3). Each caller
// creates its own bucket. The server runs until StopShared, which the
// test binary's TestMain calls.
func SharedS3(t *testing.T, bucket string) string {
	t.Helper()
	shared.Lock()
	if shared.cmd == nil && shared.err == nil {
		shared.cmd, shared.endpoint, shared.err = startMoto()
		if shared.err == nil {
			for k, v := range awsEnv(shared.endpoint) {
				if err := os.Setenv(k, v); err != nil {
					shared.err = err
				}
			}
		}
	}
	endpoint, err := shared.endpoint, shared.err
	shared.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	createBucket(t, bucket)
	return endpoint
}

// StopShared stops SharedS3's server, if one was started.
func StopShared() {
	shared.Lock()
	defer shared.Unlock()
	if shared.cmd != nil {
		shared.cmd.Process.Kill()
		shared.cmd.Wait()
		shared.cmd = nil
	}
}

// startMoto starts moto on a free loopback port and waits until it
// answers.
func startMoto() (*exec.Cmd, string, error) {
	python, err := motoPython()
	if err != nil {
		return nil, "", err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(python, "-c", serveMoto, "127.0.0.1", strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	endpoint := "http://127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(endpoint + "/moto-api/"); err == nil {
			resp.Body.Close()
			return cmd, endpoint, nil
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			return nil, "", fmt.Errorf("moto_server at %s did not answer within 30 s", endpoint)
		}
	}
}

// awsEnv points the AWS SDK (this process's, and the pipeline binary's
// that tests run) at endpoint with test credentials and no user files.
func awsEnv(endpoint string) map[string]string {
	return map[string]string{"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
		"AWS_REGION": "us-east-1", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull}
}

// createBucket creates bucket on the server the environment points at.
func createBucket(t *testing.T, bucket string) {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	if _, err := client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("create bucket %s: %v", bucket, err)
	}
}
