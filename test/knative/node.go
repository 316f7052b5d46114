package knative

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/inplace-dev/inplace/test/cluster"
	"github.com/inplace-dev/inplace/test/proc"
	"github.com/inplace-dev/inplace/test/world"
)

// Names of the Knative node.
const (
	// SystemNamespace is where Knative Eventing's own objects live.
	SystemNamespace = "knative-eventing"
	// DispatcherPort is the in-memory channel dispatcher's HTTP port,
	// fixed by Knative on every interface (and 8443 for HTTPS): one
	// dispatcher per host, and nothing else of the tests may take them.
	DispatcherPort = 8080
	// DocumentationAddress stands for every Knative Service endpoint in
	// EndpointSlices (the API server refuses loopback addresses there); no
	// traffic goes to it: the proxy routes by name.
	DocumentationAddress = "192.0.2.1"
	// ClusterDomain is the cluster DNS suffix Knative builds addresses with.
	ClusterDomain = "svc.cluster.local"
)

// binaries the node runs, from bin/knative (make bin-knative).
var binaries = []string{"eventing-controller", "mtchannel-broker", "imc-controller", "channel_dispatcher",
	"ingress", "filter", "apiserver_receive_adapter"}

// Options configure a Knative node.
type Options struct {
	// Dir holds the processes' logs; default a temporary directory,
	// removed by Stop unless INPLACE_KEEP_CLUSTER is set.
	Dir string
	// Logger receives progress; default discards.
	Logger *slog.Logger
}

// Node is Knative Eventing running on a test world: its CRDs and
// ConfigMaps in the API server, its components as host processes.
type Node struct {
	World *world.World

	dir, bin, version string
	ownDir            bool
	log               *slog.Logger
	proxy             *proxy
	apply             *applier
	procs             []*proc.Process
	adapters          *adapterRunner
	stopAdapters      context.CancelFunc
}

// Start installs Knative Eventing into w and starts its components. It
// returns once the broker ingress and filter accept connections; Brokers,
// channels and Triggers become Ready as the controllers reconcile them
// (WaitReady).
func Start(ctx context.Context, w *world.World, opts Options) (n *Node, err error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	n = &Node{World: w, dir: opts.Dir, log: opts.Logger}
	defer func() {
		if err != nil {
			n.Stop()
			n = nil
		}
	}()
	if err := n.findBinaries(); err != nil {
		return nil, err
	}
	if err := portsFree(DispatcherPort, 8443); err != nil {
		return nil, err
	}
	if n.dir == "" {
		if n.dir, err = os.MkdirTemp("", "inplace-knative-"); err != nil {
			return nil, err
		}
		n.ownDir = os.Getenv("INPLACE_KEEP_CLUSTER") == ""
	}
	if n.apply, err = newApplier(w.RestConfig()); err != nil {
		return nil, err
	}
	if n.proxy, err = startProxy(n.log); err != nil {
		return nil, err
	}
	if err := n.install(ctx); err != nil {
		return nil, fmt.Errorf("knative: install: %w", err)
	}
	if err := n.startComponents(ctx); err != nil {
		return nil, fmt.Errorf("knative: %w", err)
	}
	actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	n.stopAdapters = cancel
	n.adapters = &adapterRunner{node: n, running: map[string]*adapter{}}
	if err := n.adapters.start(actx); err != nil {
		return nil, fmt.Errorf("knative: %w", err)
	}
	n.log.Info("knative node started", "version", n.version, "dir", n.dir)
	return n, nil
}

func (n *Node) findBinaries() error {
	dir, err := cluster.FindBinDir()
	if err != nil {
		return fmt.Errorf("knative: %w", err)
	}
	n.bin = filepath.Join(dir, "knative")
	for _, b := range binaries {
		st, err := os.Stat(filepath.Join(n.bin, b))
		if err != nil || st.Mode()&0o111 == 0 {
			return fmt.Errorf("knative: %s is missing: run `make bin-knative` at the module root to build "+
				"Knative Eventing's components", filepath.Join(n.bin, b))
		}
	}
	v, err := os.ReadFile(filepath.Join(n.bin, "VERSION"))
	if err != nil {
		return fmt.Errorf("knative: %w: run `make bin-knative`", err)
	}
	n.version = strings.TrimSpace(string(v))
	return nil
}

// portsFree fails, naming the port, when one of ports is taken on any
// interface: the dispatcher binds them on all.
func portsFree(ports ...int) error {
	for _, p := range ports {
		ln, err := net.Listen("tcp", ":"+strconv.Itoa(p))
		if err != nil {
			return fmt.Errorf("knative: port %d is taken (%v): the in-memory channel dispatcher needs it; "+
				"is another Knative test or demo running?", p, err)
		}
		ln.Close()
	}
	return nil
}

// Stop ends every process of the node (the API objects stay with the
// world). Safe on a partly started node.
func (n *Node) Stop() {
	if n == nil {
		return
	}
	if n.stopAdapters != nil {
		n.stopAdapters()
		n.adapters.stopAll()
	}
	for i := len(n.procs) - 1; i >= 0; i-- {
		n.procs[i].Stop(5 * time.Second)
	}
	if n.proxy != nil {
		n.proxy.close()
	}
	if n.ownDir {
		_ = os.RemoveAll(n.dir)
	}
}

// Check reports a component that exited, with the tail of its log.
func (n *Node) Check() error {
	var errs []error
	for _, p := range n.procs {
		if done, err := p.Exited(); done {
			errs = append(errs, fmt.Errorf("knative: %s exited (%v)\n%s", p.Name(), err, p.Tail(30)))
		}
	}
	return errors.Join(errs...)
}

// Logs is the tail of every component's log, for a failing test.
func (n *Node) Logs(lines int) string {
	s := proc.Tails(lines, n.procs...)
	if n.adapters != nil {
		s += n.adapters.logs(lines)
	}
	return s
}

// ProxyURL is the node's stand-in for cluster DNS, for HTTP_PROXY.
func (n *Node) ProxyURL() string { return n.proxy.URL() }

// Route sends requests for host (a cluster name) to addr on loopback.
func (n *Node) Route(host, addr string) { n.proxy.route(host, addr) }

// Dir is where the processes' logs are.
func (n *Node) Dir() string { return n.dir }

// Version is Knative Eventing's version.
func (n *Node) Version() string { return n.version }

// ServiceHost is the cluster DNS name of a Service.
func ServiceHost(name, namespace string) string { return name + "." + namespace + "." + ClusterDomain }
