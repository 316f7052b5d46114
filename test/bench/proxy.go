package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// hookProxy stands between the registry and the receiver: it notes when
// each push's webhook arrived (the in-place clock starts there) and passes
// the delivery on unchanged.
type hookProxy struct {
	srv *http.Server
	url string

	mu      sync.Mutex
	target  string
	arrived map[string]time.Time // "repository:tag" → first arrival
	waiters map[string]chan struct{}
}

func startProxy() (*hookProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("webhook proxy: %w", err)
	}
	p := &hookProxy{url: "http://" + ln.Addr().String() + "/hooks", arrived: map[string]time.Time{}, waiters: map[string]chan struct{}{}}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// setTarget points the proxy at a receiver route.
func (p *hookProxy) setTarget(url string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = url
}

// distributionEnvelope is the part of a Distribution notification read here.
type distributionEnvelope struct {
	Events []struct {
		Action string `json:"action"`
		Target struct {
			Repository string `json:"repository"`
			Tag        string `json:"tag"`
		} `json:"target"`
	} `json:"events"`
}

func (p *hookProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p.note(body, now)
	p.mu.Lock()
	target := p.target
	p.mu.Unlock()
	if target == "" {
		http.Error(w, "no receiver yet", http.StatusServiceUnavailable)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// note records the arrival of each tagged push the delivery carries.
func (p *hookProxy) note(body []byte, at time.Time) {
	var env distributionEnvelope
	if json.Unmarshal(body, &env) != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range env.Events {
		if e.Action != "push" || e.Target.Tag == "" {
			continue
		}
		key := e.Target.Repository + ":" + e.Target.Tag
		if _, ok := p.arrived[key]; ok {
			continue
		}
		p.arrived[key] = at
		if ch, ok := p.waiters[key]; ok {
			close(ch)
			delete(p.waiters, key)
		}
	}
}

// arrival waits for the webhook of repo:tag and says when it arrived.
func (p *hookProxy) arrival(ctx context.Context, repo, tag string) (time.Time, error) {
	key := repo + ":" + tag
	p.mu.Lock()
	if t, ok := p.arrived[key]; ok {
		p.mu.Unlock()
		return t, nil
	}
	ch, ok := p.waiters[key]
	if !ok {
		ch = make(chan struct{})
		p.waiters[key] = ch
	}
	p.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		return time.Time{}, fmt.Errorf("webhook of %s: %w", key, ctx.Err())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.arrived[key], nil
}

func (p *hookProxy) close() { _ = p.srv.Close() }
