package probe

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
)

// Service runs a Prober and serves its counts over HTTP:
//
//	GET  /counts  the counts so far (JSON Counts)
//	POST /stop    stop sending, wait for the requests in flight, answer the final counts
//	GET  /readyz  200 once the prober runs
type Service struct {
	p      *Prober
	cancel context.CancelFunc
	done   chan struct{}
	final  Counts
	once   sync.Once
}

// Start starts p sending until Stop or ctx ends.
func Start(ctx context.Context, p *Prober) *Service {
	ctx, cancel := context.WithCancel(ctx)
	s := &Service{p: p, cancel: cancel, done: make(chan struct{})}
	go func() {
		s.final = p.Run(ctx)
		close(s.done)
	}()
	return s
}

// Stop stops sending and returns the final counts once the requests in
// flight have ended.
func (s *Service) Stop() Counts {
	s.once.Do(s.cancel)
	<-s.done
	return s.final
}

// Handler serves /counts, /stop and /readyz.
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /counts", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, s.p.Counts()) })
	mux.HandleFunc("POST /stop", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, s.Stop()) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	return mux
}

func writeJSON(w http.ResponseWriter, c Counts) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(c)
}
