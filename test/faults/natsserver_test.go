package faults

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// natsServers is one nats-server, or a 3-node JetStream cluster, in this
// process with file storage, on fixed ports so that a server restarted
// (or brought back) is found at the same address.
type natsServers struct {
	t    *testing.T
	opts []*server.Options
	srvs []*server.Server
}

// startNATS starts n servers (1, or 3 in a cluster).
func startNATS(t *testing.T, n int) *natsServers {
	t.Helper()
	dir := t.TempDir()
	s := &natsServers{t: t}
	clientPorts, routePorts := freePorts(t, n), freePorts(t, n)
	var routes []string
	for _, p := range routePorts {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
	}
	for i := range n {
		o := &server.Options{
			ServerName: fmt.Sprintf("n%d", i), Host: "127.0.0.1", Port: clientPorts[i],
			JetStream: true, StoreDir: filepath.Join(dir, fmt.Sprintf("n%d", i)), NoSigs: true, NoLog: os.Getenv("NATSLOG") == "",
		}
		if n > 1 {
			o.Cluster = server.ClusterOpts{Name: "inplace", Host: "127.0.0.1", Port: routePorts[i]}
			o.Routes = server.RoutesFromStr(strings.Join(routes, ","))
		}
		s.opts = append(s.opts, o)
		s.srvs = append(s.srvs, nil)
	}
	for i := range n {
		s.start(i)
	}
	t.Cleanup(s.shutdown)
	return s
}

func (s *natsServers) start(i int) {
	s.t.Helper()
	srv, err := server.NewServer(s.opts[i])
	if err != nil {
		s.t.Fatalf("nats %s: %v", s.opts[i].ServerName, err)
	}
	if !s.opts[i].NoLog {
		srv.ConfigureLogger()
	}
	go srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		s.t.Fatalf("nats %s: not ready", s.opts[i].ServerName)
	}
	s.srvs[i] = srv
}

// stop shuts server i down (a crash of the node, as the clients see it).
func (s *natsServers) stop(i int) {
	s.srvs[i].Shutdown()
	s.srvs[i].WaitForShutdown()
	s.srvs[i] = nil
}

func (s *natsServers) shutdown() {
	for i, srv := range s.srvs {
		if srv != nil {
			s.stop(i)
		}
	}
}

// URL lists every server's client URL, for nats.Connect.
func (s *natsServers) URL() string {
	var urls []string
	for _, o := range s.opts {
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", o.Port))
	}
	return strings.Join(urls, ",")
}

// index is the position of the server named name.
func (s *natsServers) index(name string) int {
	for i, o := range s.opts {
		if o.ServerName == name {
			return i
		}
	}
	return -1
}

// streamLeader names the server leading a stream's Raft group.
func streamLeader(ctx context.Context, js jetstream.JetStream, stream string) (string, error) {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return "", err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return "", err
	}
	if info.Cluster == nil {
		return "", fmt.Errorf("stream %s is not clustered", stream)
	}
	return info.Cluster.Leader, nil
}

// freePorts reserves n free loopback ports (released at once: a server
// takes them right after).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var out []int
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out
}
