package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"zorepro/pipeline/remote"
	"zorepro/pipeline/remote/file"
	"zorepro/pipeline/remote/s3"
	"zorepro/pipeline/remote/web"
)

// remoteUsage says what a REMOTE is, for flags' help.
const remoteUsage = "s3://BUCKET/PREFIX (endpoint, region and credentials as the AWS tools take them), file:///DIR, or https://… / http://… (a static host, read-only)"

// openRemote opens the remote at addr.
func openRemote(ctx context.Context, addr string) (remote.Backend, error) {
	u, err := url.Parse(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", remote.ErrBadRemote, addr, err)
	}
	switch u.Scheme {
	case "s3":
		return s3.Open(ctx, u.Host, u.Path)
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("%w: %q: a file remote is file:///ABSOLUTE/DIR (three slashes)", remote.ErrBadRemote, addr)
		}
		return file.Open(u.Path)
	case "http", "https":
		return web.Open(addr)
	}
	return nil, fmt.Errorf("%w: %q: want %s", remote.ErrBadRemote, addr, remoteUsage)
}

// transferFlags are what push and pull share: the remote (--to or
// --from), how many objects move at once, and the targets.
type transferFlags struct {
	flag    string // "to" or "from"
	addr    string
	jobs    int
	targets []string
}

func (t *transferFlags) define(f *flagSet, flag string) {
	t.flag = flag
	f.String(&t.addr, flag, "", "the remote: "+remoteUsage)
	f.Int(&t.jobs, "transfers", 8, 1, "objects moved at once")
}

func (t *transferFlags) check(args []string) []string {
	t.targets = args
	return checkRemote(t.flag, t.addr)
}

// checkRemote checks a REMOTE flag's form before anything runs.
func checkRemote(flag, addr string) []string {
	u, err := url.Parse(addr)
	switch {
	case addr == "":
		return []string{fmt.Sprintf("--%s REMOTE is required (%s)", flag, remoteUsage)}
	case err != nil:
		return []string{fmt.Sprintf("--%s %q: %v", flag, addr, err)}
	case u.Scheme == "s3" && u.Host == "":
		return []string{fmt.Sprintf("--%s %q: no bucket (s3://BUCKET/PREFIX)", flag, addr)}
	case u.Scheme == "file" && (u.Path == "" || !filepath.IsAbs(u.Path)):
		return []string{fmt.Sprintf("--%s %q: a file remote is file:///ABSOLUTE/DIR", flag, addr)}
	case u.Scheme != "s3" && u.Scheme != "file" && u.Scheme != "http" && u.Scheme != "https":
		return []string{fmt.Sprintf("--%s %q: want %s", flag, addr, remoteUsage)}
	}
	return nil
}

// readKey reads a signing key file.
func readKey(path string) (*remote.Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := remote.ParseKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// readPublicKeys reads public key files (a comma-separated list).
func readPublicKeys(paths string) ([]remote.PublicKey, error) {
	var out []remote.PublicKey
	for _, p := range strings.Split(paths, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		k, err := remote.ParsePublicKey(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, k)
	}
	return out, nil
}
