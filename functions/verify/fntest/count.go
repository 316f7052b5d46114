package fntest

import (
	"net/http"
	"sync"
)

// Writes counts the writes (POST, PUT, PATCH, DELETE) a client sends to
// pods, by answer status: wrap a client's transport with Wrap.
type Writes struct {
	mu     sync.Mutex
	status map[int]int
	next   http.RoundTripper
}

// Wrap is a rest.Config WrapTransport.
func (c *Writes) Wrap(next http.RoundTripper) http.RoundTripper {
	c.next = next
	return c
}

// RoundTrip implements http.RoundTripper.
func (c *Writes) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if req.Method == http.MethodGet || !isPod(req.URL.Path) {
		return resp, err
	}
	code := 0
	if err == nil {
		code = resp.StatusCode
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.status == nil {
		c.status = map[int]int{}
	}
	c.status[code]++
	return resp, err
}

// Status is how many pod writes got each answer (0: no answer).
func (c *Writes) Status() map[int]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[int]int{}
	for k, v := range c.status {
		out[k] = v
	}
	return out
}

// Reset forgets the writes counted so far.
func (c *Writes) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status = nil
}

// isPod: /api/v1/namespaces/<ns>/pods/<name>[/status].
func isPod(path string) bool {
	const prefix = "/api/v1/namespaces/"
	if len(path) <= len(prefix) || path[:len(prefix)] != prefix {
		return false
	}
	rest := path[len(prefix):]
	for i := range len(rest) {
		if rest[i] == '/' {
			return len(rest) > i+6 && rest[i+1:i+6] == "pods/"
		}
	}
	return false
}
