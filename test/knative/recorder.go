package knative

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
)

// Recorder is a subscriber that keeps every event a Trigger sends it, in
// order of arrival, and answers 200 with no reply.
type Recorder struct {
	srv  *http.Server
	addr string

	mu     sync.Mutex
	events []cloudevents.Event
	wake   chan struct{} // closed and replaced on each new event
	follow []func(cloudevents.Event)
}

// NewRecorder listens on a free loopback port.
func NewRecorder() (*Recorder, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Recorder{addr: ln.Addr().String(), wake: make(chan struct{})}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *Recorder) serve(w http.ResponseWriter, req *http.Request) {
	e, err := cloudevents.NewEventFromHTTPRequest(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.events = append(r.events, *e)
	close(r.wake)
	r.wake = make(chan struct{})
	follow := append([]func(cloudevents.Event){}, r.follow...)
	r.mu.Unlock()
	for _, f := range follow {
		f(*e)
	}
	w.WriteHeader(http.StatusOK)
}

// URL is the subscriber URI for a Trigger.
func (r *Recorder) URL() string { return "http://" + r.addr + "/" }

// Events is a copy of what arrived so far.
func (r *Recorder) Events() []cloudevents.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]cloudevents.Event(nil), r.events...)
}

// Follow calls f with every event from now on.
func (r *Recorder) Follow(f func(cloudevents.Event)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.follow = append(r.follow, f)
}

// Wait returns the first event (from the start) for which match is true,
// waiting for it up to within.
func (r *Recorder) Wait(ctx context.Context, within time.Duration, what string, match func(cloudevents.Event) bool) (cloudevents.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	seen := 0
	for {
		r.mu.Lock()
		evs, wake := r.events[seen:], r.wake
		seen = len(r.events)
		r.mu.Unlock()
		for _, e := range evs {
			if match(e) {
				return e, nil
			}
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return cloudevents.Event{}, fmt.Errorf("no %s through the Broker within %s", what, within)
		}
	}
}

// Close stops the server.
func (r *Recorder) Close() { _ = r.srv.Close() }
