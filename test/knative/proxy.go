package knative

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"time"
)

// proxy is the Knative node's stand-in for cluster DNS: a forward HTTP
// proxy on loopback that every Knative process and function process is
// given as HTTP_PROXY. Knative's HTTP clients clone http.DefaultTransport,
// so they honour it; Go never proxies loopback, so addresses such as the
// API server's and 127.0.0.1 subscribers are reached directly. A request
// for a cluster name (broker-ingress.knative-eventing.svc.cluster.local,
// <channel>-kn-channel.<ns>.svc.cluster.local, <ksvc>.<ns>.svc.cluster.local)
// goes to the local port serving it, Host header kept: the channel
// dispatcher routes by it.
type proxy struct {
	srv  *http.Server
	addr string
	log  *slog.Logger

	mu    sync.RWMutex
	hosts map[string]string // host → 127.0.0.1:port
	rules []rule            // tried when no host matches
}

// rule sends the hosts it matches to addr.
type rule struct {
	match func(host string) bool
	addr  string
}

func startProxy(log *slog.Logger) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	p := &proxy{addr: ln.Addr().String(), log: log, hosts: map[string]string{}}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme = "http"
			r.Out.URL.Host = r.In.Context().Value(backendKey{}).(string)
			r.Out.Host = r.In.Host
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			p.log.Warn("proxy: backend failed", "host", r.Host, "err", err)
			http.Error(w, "knative node proxy: "+err.Error(), http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{Handler: p.handler(rp), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

type backendKey struct{}

func (p *proxy) handler(rp *httputil.ReverseProxy) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.URL.Hostname()
		if host == "" {
			host, _, _ = strings.Cut(r.Host, ":")
		}
		backend, ok := p.lookup(host)
		if !ok || r.Method == http.MethodConnect {
			p.log.Warn("proxy: no route", "host", host, "method", r.Method)
			http.Error(w, fmt.Sprintf("knative node proxy: no local service for %q", host), http.StatusBadGateway)
			return
		}
		if r.Host == "" {
			r.Host = r.URL.Host
		}
		rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), backendKey{}, backend)))
	})
}

// route sends requests for host to addr.
func (p *proxy) route(host, addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hosts[host] = addr
}

// routeMatching sends requests for every host match accepts to addr.
func (p *proxy) routeMatching(match func(host string) bool, addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = append(p.rules, rule{match, addr})
}

func (p *proxy) lookup(host string) (string, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if a, ok := p.hosts[host]; ok {
		return a, true
	}
	for _, r := range p.rules {
		if r.match(host) {
			return r.addr, true
		}
	}
	return "", false
}

// URL is the proxy's address, for HTTP_PROXY.
func (p *proxy) URL() string { return "http://" + p.addr }

func (p *proxy) close() { _ = p.srv.Close() }
