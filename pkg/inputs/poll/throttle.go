package poll

import (
	"net/http"
	"strconv"
	"sync"
	"time"
)

// maxBackoff bounds how long a registry that keeps answering 429 is left alone.
const maxBackoff = 10 * time.Minute

// hostState is how a registry host answered lately.
type hostState struct {
	until    time.Time
	failures int
}

// throttle keeps each registry host's back-off: a 429 (Too Many Requests)
// leaves the host alone for its Retry-After, or else for a doubling
// multiple of the interval, up to maxBackoff; an answer resets it.
type throttle struct {
	mu    sync.Mutex
	hosts map[string]*hostState
	// retryAfter is the last Retry-After a host sent with a 429.
	retryAfter map[string]time.Duration
}

func newThrottle() *throttle {
	return &throttle{hosts: map[string]*hostState{}, retryAfter: map[string]time.Duration{}}
}

// blocked reports until when host is backed off, if it is at now.
func (t *throttle) blocked(host string, now time.Time) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.hosts[host]
	if h == nil || !now.Before(h.until) {
		return time.Time{}, false
	}
	return h.until, true
}

// limited records a 429 from host and returns how long to stay away.
func (t *throttle) limited(host string, interval time.Duration, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.hosts[host]
	if h == nil {
		h = &hostState{}
		t.hosts[host] = h
	}
	h.failures++
	wait := t.retryAfter[host]
	if wait <= 0 {
		wait = interval << min(h.failures, 16)
	}
	wait = min(max(wait, time.Second), maxBackoff)
	h.until = now.Add(wait)
	return wait
}

// answered resets host's back-off.
func (t *throttle) answered(host string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.hosts, host)
	delete(t.retryAfter, host)
}

// noteRetryAfter notes the Retry-After of every 429 on its way back.
type noteRetryAfter struct {
	next http.RoundTripper
	t    *throttle
}

func (tr noteRetryAfter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := tr.next.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusTooManyRequests {
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			tr.t.mu.Lock()
			tr.t.retryAfter[req.URL.Host] = d
			tr.t.mu.Unlock()
		}
	}
	return resp, err
}

// parseRetryAfter reads seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return t.Sub(now), true
	}
	return 0, false
}
