package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
	"github.com/inplace-dev/inplace/pkg/bus/embednats"
	"github.com/inplace-dev/inplace/pkg/config"
)

// links are the process's connections to the bus: the operator's, which
// sets up the stream, consumers and buckets (Running.Bus), and one per
// identity the process runs as (busauth), each with only its permissions.
// Without identities (a NATS URL and no --nats-credentials) one
// connection does everything.
type links struct {
	url   string
	admin *bus.Bus
	own   map[string]*bus.Bus
	close []func()
}

// bus is the bus of identity (a function, the receiver, the pod watcher).
func (l *links) bus(identity string) *bus.Bus {
	if b, ok := l.own[identity]; ok {
		return b
	}
	return l.admin
}

func (l *links) shutdown() {
	for i := len(l.close) - 1; i >= 0; i-- {
		l.close[i]()
	}
}

// identities are the identities the process runs as.
func identities(p *config.Process) []string {
	ids := slices.Clone(p.Functions)
	if p.WatchPods {
		ids = append(ids, busauth.PodWatcher)
	}
	if p.FleetHub {
		ids = append(ids, busauth.FleetHub)
	}
	return ids
}

// dialer connects as one identity.
type dialer func(identity string, opts ...nats.Option) (*nats.Conn, error)

// connect starts the embedded server (with an identity per function) or
// dials p.NATSURL, sets up the bus as the operator when it may, and
// connects each identity the process runs as.
func connect(ctx context.Context, p *config.Process, log *slog.Logger) (l *links, err error) {
	l = &links{own: map[string]*bus.Bus{}}
	defer func() {
		if err != nil {
			l.shutdown()
		}
	}()
	clientTLS, serverTLS, err := tlsConfigs(p)
	if err != nil {
		return nil, err
	}
	dir := p.CredentialsDir()
	var dial dialer
	if p.NATSURL == "" {
		srv, err := startEmbedded(p, dir, serverTLS)
		if err != nil {
			return nil, err
		}
		l.close, l.url = append(l.close, srv.Shutdown), srv.URL()
		log.Info("embedded NATS started", "url", l.url, "data", p.NATSDataDir, "credentials", dir)
		// In process, without TLS: nothing leaves the process. Other
		// processes reach the server at l.url, over TLS when it has a
		// certificate.
		dial = func(id string, opts ...nats.Option) (*nats.Conn, error) {
			return srv.Connect("inplace-"+id, opts...)
		}
	} else {
		l.url = p.NATSURL
		dial = func(id string, opts ...nats.Option) (*nats.Conn, error) {
			opts = append(append([]nats.Option{nats.Name("inplace-" + id), nats.MaxReconnects(-1)}, clientTLS...), opts...)
			nc, err := nats.Connect(p.NATSURL, opts...)
			if err != nil {
				return nil, fmt.Errorf("connect to NATS %s as %s: %w", p.NATSURL, id, err)
			}
			return nc, nil
		}
	}
	if dir == "" {
		return l, l.single(ctx, p, dial, log)
	}
	return l, l.asIdentities(ctx, p, dir, dial, log)
}

// single is one unauthenticated connection that sets up and does everything.
func (l *links) single(ctx context.Context, p *config.Process, dial dialer, log *slog.Logger) error {
	nc, err := dial("process")
	if err != nil {
		return err
	}
	l.close = append(l.close, nc.Close)
	if l.admin, err = bus.Connect(ctx, nc, p.Bus, log); err != nil {
		return err
	}
	return l.admin.EnsureConsumers(ctx, consumersOf(p)...)
}

// consumersOf are the consumers the process sets up: a fleet hub's, or
// the chain's.
func consumersOf(p *config.Process) []bus.ConsumerSpec {
	if p.FleetHub {
		return HubConsumers
	}
	return Consumers
}

// asIdentities sets up the bus as the operator (when dir holds its
// credentials) and connects each identity of the process as itself.
func (l *links) asIdentities(ctx context.Context, p *config.Process, dir string, dial dialer, log *slog.Logger) error {
	if _, err := busauth.Dial(dir, busauth.Operator); err == nil {
		b, err := l.connectAs(ctx, p, dir, busauth.Operator, dial, log)
		if err != nil {
			return err
		}
		if err := setup(ctx, b, consumersOf(p)); err != nil {
			return err
		}
		l.admin = b
	}
	for _, id := range identities(p) {
		b, err := l.connectAs(ctx, p, dir, id, dial, log)
		if err != nil {
			return err
		}
		l.own[id] = b
		if l.admin == nil {
			l.admin = b // no operator here: the setup is someone else's
		}
	}
	if l.admin == nil {
		return errors.New("--nats-credentials: no identity to connect as (no operator credentials and no function to run)")
	}
	return nil
}

func (l *links) connectAs(ctx context.Context, p *config.Process, dir, id string, dial dialer, log *slog.Logger) (*bus.Bus, error) {
	opts, err := busauth.Dial(dir, id)
	if err != nil {
		return nil, err
	}
	// A permission the identity lacks shows only here: the server refuses
	// the publish and the request waits for its timeout.
	opts = append(opts, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		log.Warn("NATS refused a request", "identity", id, "err", err)
	}))
	nc, err := dial(id, opts...)
	if err != nil {
		return nil, err
	}
	l.close = append(l.close, nc.Close)
	if id == busauth.Operator {
		return bus.Connect(ctx, nc, p.Bus, log)
	}
	return bus.Attach(ctx, nc, p.Bus, log)
}

// setup makes the stream's consumers and the buckets, as the operator.
func setup(ctx context.Context, b *bus.Bus, consumers []bus.ConsumerSpec) error {
	if err := b.EnsureConsumers(ctx, consumers...); err != nil {
		return err
	}
	if _, err := b.KV(ctx); err != nil {
		return err
	}
	if _, err := b.Leases(ctx); err != nil {
		return err
	}
	_, err := b.Failures(ctx)
	return err
}

// startEmbedded runs the embedded server taking only the identities of dir
// (made there on first start).
func startEmbedded(p *config.Process, dir string, serverTLS *tls.Config) (*embednats.Server, error) {
	host, ps, err := net.SplitHostPort(p.NATSListen)
	if err != nil {
		return nil, fmt.Errorf("--nats-listen %q: %w", p.NATSListen, err)
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return nil, fmt.Errorf("--nats-listen %q: port: %w", p.NATSListen, err)
	}
	keys, err := busauth.Ensure(dir)
	if err != nil {
		return nil, err
	}
	return embednats.Start(embednats.Options{DataDir: p.NATSDataDir, Host: host, Port: port,
		Users: busauth.EmbeddedUsers(p.Bus, keys), TLS: serverTLS})
}

// tlsConfigs are the client options and, for an embedded server, the
// server's TLS configuration, from the --nats-tls-* files.
func tlsConfigs(p *config.Process) ([]nats.Option, *tls.Config, error) {
	var client []nats.Option
	var server *tls.Config
	if p.NATSTLSCA != "" {
		client = append(client, nats.RootCAs(p.NATSTLSCA))
	}
	if p.NATSTLSCert == "" {
		return client, nil, nil
	}
	cert, err := tls.LoadX509KeyPair(p.NATSTLSCert, p.NATSTLSKey)
	if err != nil {
		return nil, nil, fmt.Errorf("--nats-tls-cert, --nats-tls-key: %w", err)
	}
	if p.NATSURL != "" {
		return append(client, nats.ClientCert(p.NATSTLSCert, p.NATSTLSKey)), nil, nil
	}
	server = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if p.NATSTLSCA == "" { // the embedded server's own certificate is the root its clients trust
		pool := x509.NewCertPool()
		pem, err := os.ReadFile(p.NATSTLSCert)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		pool.AppendCertsFromPEM(pem)
		client = append(client, nats.Secure(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}))
	}
	return client, server, nil
}

// Setup sets up the stream, the consumers and the buckets on p.NATSURL as
// the operator identity of p's credentials, and disconnects: `inplace nats
// setup`, for installations whose functions connect as identities that may
// not do it themselves.
func Setup(ctx context.Context, p *config.Process, log *slog.Logger) error {
	if p.NATSURL == "" || p.NATSCredentials == "" {
		return errors.New("nats setup: --nats-url and --nats-credentials (holding the operator's identity) are required")
	}
	if _, err := busauth.Dial(p.NATSCredentials, busauth.Operator); err != nil {
		return fmt.Errorf("nats setup: %w", err)
	}
	q := *p
	q.Functions, q.WatchPods = nil, false
	l, err := connect(ctx, &q, log)
	if err != nil {
		return err
	}
	l.shutdown()
	return nil
}
