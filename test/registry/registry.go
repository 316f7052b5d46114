package registry

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	"github.com/google/uuid"

	"github.com/inplace-dev/inplace/test/kubelet"
)

// Options configures Start.
type Options struct {
	// Notify is the notification endpoint; zero means none. Change it later
	// with SetNotify.
	Notify Notify
	// Logger receives Distribution's logs (its info logs at debug level).
	// Nil discards them.
	Logger *slog.Logger
	// Runnable makes Push build images a real node can run (see
	// runnable.go): the app of test/images with the tag as its version,
	// instead of random layers. Test worlds of real nodes set it.
	Runnable bool
}

// Registry is a running in-process Distribution registry.
type Registry struct {
	host      string
	store     string // id of the in-memory store
	secret    string
	logger    *slog.Logger
	base      context.Context
	server    *http.Server
	transport *http.Transport
	runnable  bool

	mu     sync.Mutex // serialises SetNotify
	app    atomic.Pointer[handlers.App]
	closed sync.Once
}

var _ kubelet.ImageResolver = (*Registry)(nil)

// Start starts a registry on a free 127.0.0.1 port. It serves until Close;
// ctx only bounds the start.
func Start(ctx context.Context, opts Options) (*Registry, error) {
	if err := opts.Notify.validate(); err != nil {
		return nil, fmt.Errorf("start registry: %w", err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start registry: listen: %w", err)
	}
	r := newRegistry(ctx, ln.Addr().String(), opts.Logger)
	r.runnable = opts.Runnable
	routeLogs(r.logger)
	if err := r.SetNotify(opts.Notify); err != nil {
		unrouteLogs(r.logger)
		closeStore(r.store)
		_ = ln.Close()
		return nil, fmt.Errorf("start registry: %w", err)
	}
	go r.serve(ln)
	return r, nil
}

func newRegistry(ctx context.Context, host string, logger *slog.Logger) *Registry {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	r := &Registry{
		host:      host,
		store:     openStore(),
		secret:    rand.Text(),
		logger:    logger.With("component", "registry", "host", host),
		transport: transport,
	}
	// Distribution reads its instance id (a UUIDv7, as its own
	// dcontext.Background makes) from this string key; it becomes
	// source.instanceID in every event, as in a real registry.
	id := uuid.Must(uuid.NewV7()).String()
	r.base = context.WithValue(context.WithoutCancel(ctx), "instance.id", id) //nolint:staticcheck // Distribution's key.
	r.server = &http.Server{
		Handler:           http.HandlerFunc(r.serveHTTP),
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(r.logger.Handler(), slog.LevelWarn),
	}
	return r
}

func (r *Registry) serve(ln net.Listener) {
	if err := r.server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		r.logger.Error("registry server stopped", "err", err)
	}
}

func (r *Registry) serveHTTP(w http.ResponseWriter, req *http.Request) {
	r.app.Load().ServeHTTP(w, req)
}

// Host is the registry's host:port, e.g. "127.0.0.1:41235"; image
// references for this registry start with it.
func (r *Registry) Host() string { return r.host }

// Transport is the registry's own HTTP transport, for clients of it in the
// test process. http.DefaultTransport is shared with every httptest.Server,
// whose Close breaks its idle connections under a request about to reuse
// one ("CloseIdleConnections called").
func (r *Registry) Transport() http.RoundTripper { return r.transport }

// SetNotify replaces the notification endpoint. Distribution fixes its
// endpoints when its app is built, so SetNotify builds a new Distribution
// app over the same storage and swaps it in; requests already running finish
// on the old app. Events the old app still holds (its endpoint never
// accepted them) keep being retried to the old URL in the background, as
// Distribution offers no way to stop its queue.
func (r *Registry) SetNotify(n Notify) error {
	if err := n.validate(); err != nil {
		return fmt.Errorf("set notify: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	app, err := newApp(r.base, appConfig(r.host, r.store, r.secret, n))
	if err != nil {
		return fmt.Errorf("set notify: %w", err)
	}
	r.app.Store(app)
	return nil
}

// newApp builds a Distribution app, turning its panics on bad
// configuration into an error.
func newApp(ctx context.Context, cfg *configuration.Configuration) (app *handlers.App, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("distribution app: %v", p)
		}
	}()
	return handlers.NewApp(ctx, cfg), nil
}

// Close stops the server and drops the stored images. Events still queued
// for the notification endpoint are not flushed.
func (r *Registry) Close() error {
	var err error
	r.closed.Do(func() {
		err = r.server.Close()
		r.transport.CloseIdleConnections()
		unrouteLogs(r.logger)
		closeStore(r.store)
	})
	if err != nil {
		return fmt.Errorf("close registry: %w", err)
	}
	return nil
}
