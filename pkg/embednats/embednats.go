// Package embednats runs nats-server with JetStream inside the process, so
// `inplace run` works with nothing else installed. It listens on loopback
// only unless told otherwise; production points --nats-url at a cluster.
package embednats

import (
	"fmt"
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
}

// Server is a running embedded nats-server.
type Server struct {
	ns *server.Server
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
	ns, err := server.NewServer(&server.Options{
		ServerName: opts.Name,
		Host:       opts.Host,
		Port:       opts.Port,
		JetStream:  true,
		StoreDir:   opts.DataDir,
		NoSigs:     true,
		NoLog:      true,
	})
	if err != nil {
		return nil, fmt.Errorf("embedded nats: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("embedded nats: not ready after 10s on %s:%d", opts.Host, opts.Port)
	}
	return &Server{ns: ns}, nil
}

// URL is the client URL of the server.
func (s *Server) URL() string { return s.ns.ClientURL() }

// Connect opens a client connection to the server.
func (s *Server) Connect(name string) (*nats.Conn, error) {
	nc, err := nats.Connect(s.URL(), nats.Name(name), nats.MaxReconnects(-1))
	if err != nil {
		return nil, fmt.Errorf("embedded nats: connect: %w", err)
	}
	return nc, nil
}

// Shutdown stops the server and waits for it.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}
