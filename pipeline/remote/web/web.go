package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"zorepro/pipeline/remote"
)

// MaxLoad bounds what Load reads (an index).
const MaxLoad = 256 << 20

// Host is a remote on a static web host.
type Host struct {
	base   *url.URL
	client *http.Client
}

var _ remote.Backend = (*Host)(nil)

// Open returns the remote whose root is the URL base (http or https).
func Open(base string) (*Host, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: %q is not an http(s) URL", remote.ErrBadRemote, base)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/"
	return &Host{base: u, client: &http.Client{Timeout: 0}}, nil
}

func (h *Host) String() string { return strings.TrimSuffix(h.base.String(), "/") }

func (h *Host) url(key string) string {
	return h.base.String() + (&url.URL{Path: key}).EscapedPath()
}

// do sends a request and maps 404 to remote.ErrNotFound and any status but
// 200 to an error naming the URL.
func (h *Host) do(ctx context.Context, method, key string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, h.url(key), nil)
	if err != nil {
		return nil, err
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("remote %s: %w", h, err)
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		return resp, nil
	case resp.StatusCode == http.StatusNotFound:
		resp.Body.Close()
		return nil, fmt.Errorf("%w: %s", remote.ErrNotFound, h.url(key))
	}
	resp.Body.Close()
	return nil, fmt.Errorf("remote %s: %s %s: %s", h, method, h.url(key), resp.Status)
}

func (h *Host) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	resp, err := h.do(ctx, http.MethodGet, key)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

func (h *Host) Head(ctx context.Context, key string) (int64, error) {
	resp, err := h.do(ctx, http.MethodHead, key)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.ContentLength, nil
}

func (h *Host) Load(ctx context.Context, key string) ([]byte, string, error) {
	resp, err := h.do(ctx, http.MethodGet, key)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxLoad+1))
	if err != nil {
		return nil, "", fmt.Errorf("remote %s: %s: %w", h, key, err)
	}
	if len(b) > MaxLoad {
		return nil, "", fmt.Errorf("remote %s: %s is larger than %d bytes", h, key, MaxLoad)
	}
	return b, resp.Header.Get("ETag"), nil
}

func (h *Host) Create(context.Context, string, io.ReadSeeker, int64) error {
	return fmt.Errorf("%s: %w", h, remote.ErrReadOnly)
}

func (h *Host) Swap(context.Context, string, []byte, string) error {
	return fmt.Errorf("%s: %w", h, remote.ErrReadOnly)
}

func (h *Host) Delete(context.Context, string) error {
	return fmt.Errorf("%s: %w", h, remote.ErrReadOnly)
}

func (h *Host) List(context.Context, string, func(string, int64, time.Time) error) error {
	return fmt.Errorf("%s: %w: a static web host cannot list its files", h, remote.ErrReadOnly)
}
