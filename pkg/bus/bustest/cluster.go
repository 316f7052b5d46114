package bustest

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Servers is one nats-server, or a JetStream cluster of several, in this
// process with file storage, on fixed loopback ports so that a server
// restarted (or brought back) is found at the same address. NATSLOG=1
// shows their logs.
type Servers struct {
	t    testing.TB
	opts []*server.Options
	srvs []*server.Server
}

// Cluster starts n servers (a cluster when n > 1), stopped at cleanup.
func Cluster(t testing.TB, n int) *Servers {
	t.Helper()
	s := NewCluster(t, n)
	for i := range n {
		s.Start(i)
	}
	return s
}

// NewCluster configures n servers without starting any (Start does),
// stopped at cleanup.
func NewCluster(t testing.TB, n int) *Servers {
	t.Helper()
	dir := t.TempDir()
	s := &Servers{t: t}
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
	t.Cleanup(s.shutdown)
	return s
}

// Start starts server i (again, on the same port and store).
func (s *Servers) Start(i int) {
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

// Stop shuts server i down (a crash of the node, as the clients see it).
func (s *Servers) Stop(i int) {
	s.srvs[i].Shutdown()
	s.srvs[i].WaitForShutdown()
	s.srvs[i] = nil
}

func (s *Servers) shutdown() {
	for i, srv := range s.srvs {
		if srv != nil {
			s.Stop(i)
		}
	}
}

// URL lists every server's client URL, for nats.Connect.
func (s *Servers) URL() string {
	var urls []string
	for _, o := range s.opts {
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", o.Port))
	}
	return strings.Join(urls, ",")
}

// Index is the position of the server named name, or -1.
func (s *Servers) Index(name string) int {
	for i, o := range s.opts {
		if o.ServerName == name {
			return i
		}
	}
	return -1
}

// freePorts reserves n free loopback ports (released at once: a server
// takes them right after).
func freePorts(t testing.TB, n int) []int {
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
