package kube

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// Write is one API write a dry-run client made: what it asked for and what
// the API server says the object would become.
type Write struct {
	Verb string
	// Path is the request path, e.g. /api/v1/namespaces/shop/pods/web-0/status.
	Path string
	// Body is the request body (a patch, or an object).
	Body []byte
	// Status is the HTTP status of the dry-run answer.
	Status int
	// Result is the object the API server returned: the object as the
	// write would leave it (nothing is stored).
	Result []byte
}

// DryRun records the writes made through a rest.Config wrapped by Wrap.
type DryRun struct {
	mu     sync.Mutex
	writes []Write
}

// Wrap returns a copy of cfg whose every write (POST, PUT, PATCH, DELETE)
// is a server-side dry run (?dryRun=All): the API server validates,
// admits and computes it, and stores nothing. Reads go through unchanged.
func (d *DryRun) Wrap(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	// JSON both ways, so the recorded answers can be read and diffed.
	c.ContentType, c.AcceptContentTypes = "application/json", "application/json"
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &dryRunTransport{next: rt, d: d} })
	return c
}

// Writes returns the writes so far and forgets them.
func (d *DryRun) Writes() []Write {
	d.mu.Lock()
	defer d.mu.Unlock()
	w := d.writes
	d.writes = nil
	return w
}

type dryRunTransport struct {
	next http.RoundTripper
	d    *DryRun
}

func (t *dryRunTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return t.next.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	q := r.URL.Query()
	q.Set("dryRun", "All")
	r.URL.RawQuery = q.Encode()
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, fmt.Errorf("dry run: read body: %w", err)
		}
		body = b
		r.Body = io.NopCloser(bytes.NewReader(b))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	result, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("dry run: read answer: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(result))
	// Events are a side channel, not a change to the workloads.
	if !strings.Contains(req.URL.Path, "/events") {
		t.d.mu.Lock()
		t.d.writes = append(t.d.writes, Write{Verb: req.Method, Path: req.URL.Path, Body: body, Status: resp.StatusCode, Result: result})
		t.d.mu.Unlock()
	}
	return resp, nil
}
