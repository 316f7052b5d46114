package knative

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/inplace-dev/inplace/test/proc"
)

// component is one Knative process and what it needs besides the common
// environment.
type component struct {
	name, bin string
	env       []string
	// port, when set, is an HTTP port to wait for.
	port int
}

// AdapterImage is the image the eventing controller puts in an
// ApiServerSource's Deployment. It is pushed to the world's registry, so
// the Deployment's pods run (and make it Available) on the simulated
// nodes; the adapter itself runs on the host (adapterRunner).
func (n *Node) AdapterImage() string {
	return n.World.Registry.Host() + "/knative/apiserver_receive_adapter:" + n.version
}

func (n *Node) startComponents(ctx context.Context) error {
	if _, err := n.World.Registry.Push(ctx, "knative/apiserver_receive_adapter", n.version); err != nil {
		return err
	}
	ports, err := freePorts(10)
	if err != nil {
		return err
	}
	ingress, filter := ports[0], ports[1]
	comps := []component{
		{name: "eventing-controller", env: []string{"APISERVER_RA_IMAGE=" + n.AdapterImage()}},
		{name: "mtchannel-broker"},
		{name: "imc-controller", env: []string{"DISPATCHER_IMAGE=host-process/channel_dispatcher"}},
		{name: "channel_dispatcher", env: []string{"CONTAINER_NAME=dispatcher", "MAX_IDLE_CONNS=1000", "MAX_IDLE_CONNS_PER_HOST=1000"}, port: DispatcherPort},
		{name: "ingress", env: []string{"CONTAINER_NAME=ingress", "NAMESPACE=" + SystemNamespace,
			"INGRESS_PORT=" + strconv.Itoa(ingress), "INGRESS_PORT_HTTPS=" + strconv.Itoa(ports[2])}, port: ingress},
		{name: "filter", env: []string{"CONTAINER_NAME=filter", "NAMESPACE=" + SystemNamespace,
			"FILTER_PORT=" + strconv.Itoa(filter), "FILTER_PORT_HTTPS=" + strconv.Itoa(ports[3])}, port: filter},
	}
	for i, c := range comps {
		env := append(n.baseEnv(c.name, ports[4+i]), c.env...)
		p, err := proc.Start(n.dir, c.name, filepath.Join(n.bin, c.name), nil, env...)
		if err != nil {
			return err
		}
		n.procs = append(n.procs, p)
	}
	n.proxy.route(ServiceHost(IngressService, SystemNamespace), loopback(ingress))
	n.proxy.route(ServiceHost(FilterService, SystemNamespace), loopback(filter))
	n.proxy.route(ServiceHost(DispatcherService, SystemNamespace), loopback(DispatcherPort))
	n.proxy.routeMatching(func(host string) bool {
		name, _, _ := strings.Cut(host, ".")
		return strings.HasSuffix(name, "-kn-channel") && strings.HasSuffix(host, "."+ClusterDomain)
	}, loopback(DispatcherPort))
	for _, c := range comps {
		if c.port == 0 {
			continue
		}
		if err := n.waitPort(ctx, c.name, c.port); err != nil {
			return err
		}
	}
	return nil
}

// baseEnv is what every Knative process gets, as its Deployment would:
// the system namespace, its ConfigMaps, a pod name; plus the admin
// kubeconfig, the proxy and a profiling port of its own (the profiling
// server binds every interface; its port is the only setting).
func (n *Node) baseEnv(name string, profilingPort int) []string {
	return []string{
		"KUBECONFIG=" + n.World.Cluster.Kubeconfig(),
		"HTTP_PROXY=" + n.proxy.URL(), "NO_PROXY=", "no_proxy=",
		"SYSTEM_NAMESPACE=" + SystemNamespace,
		"POD_NAME=" + name + "-host",
		"CONFIG_LOGGING_NAME=config-logging",
		"CONFIG_OBSERVABILITY_NAME=config-observability",
		"METRICS_DOMAIN=knative.dev/eventing",
		"PROFILING_PORT=" + strconv.Itoa(profilingPort),
	}
}

// waitPort waits until the component accepts connections on port.
func (n *Node) waitPort(ctx context.Context, name string, port int) error {
	var p *proc.Process
	for _, q := range n.procs {
		if q.Name() == name {
			p = q
		}
	}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		if err := p.ErrExited(); err != nil {
			return false, err
		}
		c, err := net.DialTimeout("tcp", loopback(port), time.Second)
		if err != nil {
			return false, nil
		}
		c.Close()
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("%s not listening on %d: %w\n%s", name, port, err, p.Tail(30))
	}
	return nil
}

func loopback(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// freePorts returns n distinct free loopback ports.
func freePorts(n int) ([]int, error) {
	var out []int
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}
