package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"zorepro/pipeline/remote/remotetest"
)

// pullSummary is what pull --json prints.
type pullSummary struct {
	Pulled        []string `json:"pulled"`
	Present       []string `json:"present"`
	Missing       []string `json:"missing"`
	ClosureBytes  int64    `json:"closure_bytes"`
	FetchedBytes  int64    `json:"fetched_bytes"`
	MetadataBytes int64    `json:"metadata_bytes"`
	Fetched       int      `json:"fetched"`
	Objects       int      `json:"objects"`
	TrustedBy     string   `json:"trusted_by"`
}

func decodePull(t *testing.T, js string) pullSummary {
	t.Helper()
	var s pullSummary
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		t.Fatalf("pull --json: %v\n%s", err, js)
	}
	return s
}

// storeState hashes a store's entries and event log (not its staging
// directory): what a refused pull must leave as it was.
func storeState(t *testing.T, dir string) map[string][32]byte {
	out := map[string][32]byte{}
	for p, h := range storeFiles(t, dir) {
		if rel, _ := filepath.Rel(dir, p); strings.HasPrefix(rel, "cas/") || rel == "events.db" {
			out[rel] = h
		}
	}
	return out
}

// The smoke profile's results travel through an S3 bucket (moto on
// loopback), a directory and a static web host: pushed signed, pulled
// into an empty store with the key trusted, nothing runs there, a figure
// audits and the store verifies against a smoke publication. Pulling one
// figure fetches its closure only; a damaged object in the bucket and a
// wrongly signed index are refused with the store unchanged (issue 41).
func TestRemoteRoundTrips(t *testing.T) {
	t.Parallel() // no clock in its checks; see tests.md
	bin, root, dir, common := smokeStore(t)
	remotetest.SharedS3(t, "lab")
	pub := filepath.Join(dir, "pub")
	if out, code := cli(t, bin, root, withFlags([]string{"publish", "--to", pub}, common...)...); code != 0 {
		t.Fatalf("publish: %d\n%s", code, out)
	}
	for _, name := range []string{"lab", "mallory"} {
		if out, code := cli(t, bin, root, "keygen", name, "--to", filepath.Join(dir, name+".key")); code != 0 || !strings.Contains(out, "zorepro-public-key-1 "+name) {
			t.Fatalf("keygen: %d\n%s", code, out)
		}
	}
	labKey, labPub, malloryPub := filepath.Join(dir, "lab.key"), filepath.Join(dir, "lab.key.pub"), filepath.Join(dir, "mallory.key.pub")
	fileRemote := filepath.Join(dir, "remote")
	srv := httptest.NewServer(http.FileServer(http.Dir(fileRemote)))
	defer srv.Close()
	store := func(name string) []string {
		return []string{"--dag", filepath.Join(root, "dag.yaml"), "--store", filepath.Join(dir, name), "--figures", filepath.Join(dir, name+"-fig")}
	}
	for _, c := range []struct{ name, push, pull string }{
		{"s3", "s3://lab/smoke", "s3://lab/smoke"},
		{"file", "file://" + fileRemote, "file://" + fileRemote},
		{"http", "", srv.URL + "/"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.push != "" {
				if out, code := cli(t, bin, root, withFlags([]string{"push", "report", "--to", c.push, "--sign", labKey}, common...)...); code != 0 || !strings.Contains(out, "pushed 257 of 257 tasks") {
					t.Fatalf("push: exit %d\n%s", code, out)
				}
			}
			js, code := cliStdout(t, bin, root, withFlags([]string{"pull", "--from", c.pull, "--trust", labPub, "--json"}, store(c.name)...)...)
			if s := decodePull(t, js); code != 0 || len(s.Pulled) != 257 || s.TrustedBy != "lab" {
				t.Fatalf("pull into an empty store: exit %d, %d pulled, trusted by %q", code, len(s.Pulled), s.TrustedBy)
			}
			res, _ := pipelineRun(t, bin, root, append(store(c.name), "--profile", "smoke")...)
			if len(res.Executed) != 0 || len(res.Cached) != 257 {
				t.Fatalf("a run after the pull executed %v", res.Executed)
			}
			for _, args := range [][]string{{"audit", "fig3a-swimmer.svg"}, {"verify", "--against", pub}} {
				if out, code := cli(t, bin, root, withFlags(args, store(c.name)...)...); code != 0 {
					t.Errorf("%v on the pulled store: exit %d\n%s", args, code, out)
				}
			}
		})
	}

	// One figure: exactly its closure.
	closure, _ := cliStdout(t, bin, root, withFlags([]string{"run", "plot/fig3a-swimmer", "--dry-run", "--profile", "smoke"}, store("none")...)...)
	m := regexp.MustCompile(`(\d+) of (\d+) tasks would run`).FindStringSubmatch(closure)
	if m == nil {
		t.Fatalf("dry run of plot/fig3a-swimmer:\n%s", closure)
	}
	want, _ := strconv.Atoi(m[1])
	js, code := cliStdout(t, bin, root, withFlags([]string{"pull", "plot/fig3a-swimmer", "--from", "s3://lab/smoke", "--json"}, store("one")...)...)
	s := decodePull(t, js)
	if code != 0 || len(s.Pulled) != want || s.FetchedBytes != s.ClosureBytes {
		t.Fatalf("pull of plot/fig3a-swimmer: exit %d, %d tasks pulled (its closure has %d), fetched %d bytes for a closure of %d", code, len(s.Pulled), want, s.FetchedBytes, s.ClosureBytes)
	}
	t.Logf("pull of plot/fig3a-swimmer: %d tasks, fetched %d bytes for a closure of %d, and %d bytes of index and action entries", len(s.Pulled), s.FetchedBytes, s.ClosureBytes, s.MetadataBytes)
	// A reader's two commands: pull one figure, audit it (from the store:
	// nothing exported yet).
	if out, code := cli(t, bin, root, withFlags([]string{"audit", "fig3a-swimmer.svg", "--profile", "smoke"}, store("one")...)...); code != 0 || !strings.Contains(out, "plotted points equal, bit for bit") {
		t.Errorf("audit after pulling one figure: exit %d\n%s", code, out)
	}
	if res, _ := pipelineRun(t, bin, root, append(store("one"), "plot/fig3a-swimmer", "--profile", "smoke")...); len(res.Executed) != 0 {
		t.Errorf("a run of the pulled figure executed %v", res.Executed)
	}

	// A wrongly signed index, then a damaged object: refused, the store as
	// it was.
	// (The store holds the LQR figure's small results, not the largest
	// object, which is damaged below.)
	pipelineRun(t, bin, root, append(store("refused"), "--profile", "smoke", "plot/fig3c-lqr")...)
	before := storeState(t, filepath.Join(dir, "refused"))
	out, code := cli(t, bin, root, withFlags([]string{"pull", "--from", "s3://lab/smoke", "--trust", malloryPub}, store("refused")...)...)
	if code != 1 || !strings.Contains(out, "signed only by lab") {
		t.Errorf("pull trusting another key: exit %d\n%s", code, out)
	}
	victim := damageLargestObject(t, "lab", "smoke/")
	out, code = cli(t, bin, root, withFlags([]string{"pull", "--from", "s3://lab/smoke"}, store("refused")...)...)
	if code != 1 || !strings.Contains(out, victim) || !strings.Contains(out, "damaged object") {
		t.Errorf("pull with a damaged object: exit %d, want 1 naming %s\n%s", code, victim, out)
	}
	sameFiles(t, "the store of refused pulls", before, storeState(t, filepath.Join(dir, "refused")))
}

// damageLargestObject flips a byte of the largest object under prefix in
// the bucket and returns its key (below the prefix).
func damageLargestObject(t *testing.T, bucket, prefix string) string {
	t.Helper()
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	var key string
	var size int64
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix + "objects/")})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			if aws.ToInt64(o.Size) > size {
				key, size = aws.ToString(o.Key), aws.ToInt64(o.Size)
			}
		}
	}
	obj, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.ReadFrom(obj.Body)
	obj.Body.Close()
	b := buf.Bytes()
	b[len(b)/2] ^= 1
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(b)}); err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(key, prefix)
}

// Four pushers of overlapping targets at once leave a bucket from which
// one pull finds everything; SIGINT in the middle of a push and of a pull
// stops them (exit 130) and the same commands then complete, the pulled
// store the same as an uninterrupted pull's (issue 41).
func TestRemoteConcurrencyAndInterrupts(t *testing.T) {
	t.Parallel() // no clock in its checks; see tests.md
	bin, root, dir, common := smokeStore(t)
	remotetest.SharedS3(t, "team")
	targets := []string{"plot/fig3a-swimmer", "plot/fig2-linreg", "plot/fig3c-lqr", "report"}
	var wg sync.WaitGroup
	outs := make([]string, len(targets))
	codes := make([]int, len(targets))
	for i, tg := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, withFlags([]string{"push", tg, "--to", "s3://team/shared"}, common...)...)
			cmd.Dir = root
			b, _ := cmd.CombinedOutput()
			outs[i], codes[i] = string(b), cmd.ProcessState.ExitCode()
		}()
	}
	wg.Wait()
	for i := range targets {
		if codes[i] != 0 {
			t.Errorf("pusher of %s: exit %d\n%s", targets[i], codes[i], outs[i])
		}
	}
	store := func(name string) []string {
		return []string{"--dag", filepath.Join(root, "dag.yaml"), "--store", filepath.Join(dir, name), "--figures", filepath.Join(dir, name+"-fig")}
	}
	js, code := cliStdout(t, bin, root, withFlags([]string{"pull", "--from", "s3://team/shared", "--json"}, store("whole")...)...)
	whole := decodePull(t, js)
	if code != 0 || len(whole.Pulled) != 257 || len(whole.Missing) != 0 {
		t.Fatalf("pull after 4 concurrent pushers: exit %d, %d pulled, %d missing", code, len(whole.Pulled), len(whole.Missing))
	}
	// The closure: a record per task and the store entries (the smoke
	// profile's outputs, 554 when this was written).
	closure := whole.Objects - 257

	// SIGINT in a push, then the same push completes; a pull from it
	// finds everything.
	cmd := stoppedAt(t, bin, root, "remote.object:100", withFlags([]string{"push", "report", "--to", "s3://team/cut"}, common...)...)
	if code, took := interrupt(t, cmd, syscall.SIGINT); code != exitInterrupted {
		t.Errorf("push after SIGINT: exit %d, want 130", code)
	} else {
		t.Logf("push stopped %v after SIGINT", took.Round(time.Millisecond))
	}
	if out, code := cli(t, bin, root, withFlags([]string{"push", "report", "--to", "s3://team/cut"}, common...)...); code != 0 {
		t.Fatalf("push after the interruption: exit %d\n%s", code, out)
	}
	// SIGINT in a pull, then the same pull completes, fetching less.
	// Its first 257 fetches are the tasks' records, then the store
	// entries: stopped after half of these.
	cmd = stoppedAt(t, bin, root, fmt.Sprintf("remote.object:%d", 257+closure/2), withFlags([]string{"pull", "--from", "s3://team/cut"}, store("cut")...)...)
	if code, took := interrupt(t, cmd, syscall.SIGINT); code != exitInterrupted {
		t.Errorf("pull after SIGINT: exit %d, want 130", code)
	} else {
		t.Logf("pull stopped %v after SIGINT", took.Round(time.Millisecond))
	}
	filepath.Walk(filepath.Join(dir, "cut"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasPrefix(fi.Name(), ".tmp-") {
			t.Errorf("an interrupted pull left %s", p)
		}
		return nil
	})
	// What the interrupted pull verified waits in the staging directory:
	// the 257 records, then the store entries it got to (about half; the
	// exact number depends on which fetches were in flight).
	staged := 0
	filepath.Walk(filepath.Join(dir, "cut", "incoming"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			staged++
		}
		return nil
	})
	entries := staged - 257
	if entries < closure/4 || entries > closure*3/4 {
		t.Fatalf("the interrupted pull staged %d files, %d store entries beside the 257 records: want it stopped about half way through the %d", staged, entries, closure)
	}
	js, code = cliStdout(t, bin, root, withFlags([]string{"pull", "--from", "s3://team/cut", "--json"}, store("cut")...)...)
	if s := decodePull(t, js); code != 0 || len(s.Pulled) != 257 || s.Fetched != closure-entries {
		t.Fatalf("pull after the interruption: exit %d, %d pulled, %d entries fetched (the interrupted pull had verified %d of %d, so %d were left)", code, len(s.Pulled), s.Fetched, entries, closure, closure-entries)
	}
	sameFiles(t, "the store of an interrupted, then completed pull against an uninterrupted one's", casFiles(t, filepath.Join(dir, "whole")), casFiles(t, filepath.Join(dir, "cut")))
	res, _ := pipelineRun(t, bin, root, append(store("cut"), "--profile", "smoke")...)
	if len(res.Executed) != 0 {
		t.Errorf("a run after the completed pull executed %v", res.Executed)
	}
}

// run --remote shares results: a first machine computes a target and
// pushes each task's result as it finishes; a second, from an empty
// store, pulls them all and executes nothing; a third, asked for more,
// executes only what the remote lacks (issue 41).
func TestRunRemoteSharesResults(t *testing.T) {
	bin, root, dir := binary(t), repoRoot(t), t.TempDir()
	shared := "file://" + filepath.Join(dir, "shared")
	machine := func(name string, targets ...string) runResult {
		args := append([]string{"--dag", filepath.Join(root, "dag.yaml"), "--profile", "smoke", "--store", filepath.Join(dir, name),
			"--figures", filepath.Join(dir, name+"-fig"), "--remote", shared}, targets...)
		res, stderr := pipelineRun(t, bin, root, args...)
		t.Logf("%s: %s", name, strings.TrimSpace(stderr[strings.LastIndex(stderr, "remote "):]))
		return res
	}
	a := machine("cluster", "plot/fig3c-lqr")
	if len(a.Executed) == 0 {
		t.Fatal("the first machine executed nothing")
	}
	if b := machine("laptop", "plot/fig3c-lqr"); len(b.Executed) != 0 || len(b.Cached) != len(a.Executed) {
		t.Errorf("the second machine executed %v (%d cached), want nothing", b.Executed, len(b.Cached))
	}
	c := machine("desk", "plot/fig3c-lqr", "plot/olr-regret")
	for _, task := range c.Executed {
		if strings.Contains(task, "lqr") {
			t.Errorf("the third machine executed %s, which the remote holds", task)
		}
	}
	if len(c.Executed) == 0 {
		t.Error("the third machine executed nothing of plot/olr-regret")
	}
}
