// Package embednats runs nats-server with JetStream inside the process, so
// `inplace run` works with nothing else installed. It listens on loopback
// only unless told otherwise; production points --nats-url at a cluster.
// The process itself reaches the server in process (Connect), other
// processes at URL.
// With Users set, every client must authenticate with one of their nkeys
// and may do only what its permissions allow. A server may be a hub taking
// leaf node connections (Options.Hub) or a leaf node of a hub
// (Options.Leaf), each with a JetStream domain of its own, so a leaf's
// streams and buckets stay local and keep working while the hub is away.
package embednats

import (
	"crypto/tls"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Options configure the embedded server.
type Options struct {
	// DataDir holds JetStream's store; it survives restarts.
	DataDir string
	// Host to listen on; default 127.0.0.1.
	Host string
	// Port to listen on; 0 means the NATS default 4222, -1 a free port.
	Port int
	// Name of the server, shown in monitoring.
	Name string
	// Users, when set, are the only clients the server takes.
	Users []User
	// TLS, when set, makes the server take TLS connections only.
	TLS *tls.Config
	// Domain is the server's JetStream domain. A hub and its leaf nodes
	// each have one of their own, so a leaf's streams and buckets stay on
	// the leaf and its JetStream answers while the hub is away; the other
	// side's API is reached as $JS.<domain>.API.
	Domain string
	// Hub, when set, makes the server accept leaf node connections, each
	// authenticated as one of Users (an nkey) and confined to that user's
	// subjects.
	Hub *Hub
	// Leaf, when set, joins the server to a hub as a leaf node.
	Leaf *Leaf
}

// Hub is where a server accepts leaf node connections.
type Hub struct {
	// Host to listen on; default Options.Host.
	Host string
	// Port to listen on; 0 means the NATS default 7422, -1 a free port.
	Port int
}

// Leaf is a server's connection to its hub.
type Leaf struct {
	// URL of the hub's leaf node port (nats-leaf://host:port).
	URL string
	// Seed is the nkey seed ("SU…") the leaf authenticates with; the hub
	// confines the connection to the permissions of its public key.
	Seed string
}

// User is a client identity: an nkey and the subjects it may use.
type User struct {
	// Nkey is the public user key ("U…").
	Nkey string
	// Publish and Subscribe are the subjects allowed; everything else is
	// denied.
	Publish, Subscribe []string
}

// Server is a running embedded nats-server.
type Server struct {
	ns *server.Server
	so *server.Options
}

// Start runs the server and waits until it accepts connections.
func Start(opts Options) (*Server, error) {
	if opts.DataDir == "" {
		return nil, fmt.Errorf("embedded nats: a data dir is required")
	}
	if opts.Host == "" {
		opts.Host = "127.0.0.1"
	}
	if opts.Port == 0 {
		opts.Port = 4222
	}
	if opts.Name == "" {
		opts.Name = "inplace-embedded"
	}
	so, err := serverOptions(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded nats: %w", err)
	}
	ns, err := server.NewServer(so)
	if err != nil {
		return nil, fmt.Errorf("embedded nats: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("embedded nats: not ready after 10s on %s:%d", opts.Host, opts.Port)
	}
	return &Server{ns: ns, so: so}, nil
}

func serverOptions(opts Options) (*server.Options, error) {
	so := &server.Options{
		ServerName: opts.Name,
		Host:       opts.Host,
		Port:       opts.Port,
		JetStream:  true,
		StoreDir:   opts.DataDir,
		NoSigs:     true,
		NoLog:      true,
		Nkeys:      nkeyUsers(opts.Users),

		JetStreamDomain: opts.Domain,
	}
	if opts.TLS != nil {
		so.TLS, so.TLSConfig, so.TLSTimeout = true, opts.TLS, 2
	}
	if err := leafOptions(so, opts); err != nil {
		return nil, err
	}
	return so, nil
}

func nkeyUsers(users []User) []*server.NkeyUser {
	if len(users) == 0 {
		return nil // no users: every client is taken
	}
	out := make([]*server.NkeyUser, 0, len(users))
	for _, u := range users {
		out = append(out, &server.NkeyUser{Nkey: u.Nkey, Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: u.Publish},
			Subscribe: &server.SubjectPermission{Allow: u.Subscribe},
		}})
	}
	return out
}

// URL is the client URL of the server, for clients in other processes.
func (s *Server) URL() string { return s.ns.ClientURL() }

// Connect opens a client connection to the server from this process with
// opts (an identity's credentials, when the server has Users). The
// connection is in process, a pipe to the server's client handler rather
// than a loopback socket, and costs a message less CPU on both sides; the
// server authenticates and confines it as it does one over TCP. TLS is not
// required on it (nothing leaves the process), though the server still
// takes a client that asks for it. After Shutdown the connection cannot
// reconnect: it tries until closed, as a TCP one would against a closed
// port.
func (s *Server) Connect(name string, opts ...nats.Option) (*nats.Conn, error) {
	opts = append([]nats.Option{nats.Name(name), nats.MaxReconnects(-1)}, opts...)
	opts = append(opts, nats.InProcessServer(inProcess{s.ns}))
	// The URL names the server (a tls:// one would make the client ask
	// for TLS); the connection does not dial it.
	nc, err := nats.Connect(strings.Replace(s.URL(), "tls://", "nats://", 1), opts...)
	if err != nil {
		return nil, fmt.Errorf("embedded nats: connect as %s: %w", name, err)
	}
	return nc, nil
}

// Shutdown stops the server and waits for it.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}
