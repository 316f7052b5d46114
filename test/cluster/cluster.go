package cluster

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/inplace-dev/inplace/test/proc"
)

// Options configures a control plane. The zero value is usable.
type Options struct {
	// BinDir holds etcd, kube-apiserver and kube-controller-manager;
	// default FindBinDir.
	BinDir string
	// Logger receives progress messages; default discards them.
	Logger *slog.Logger
	// StartTimeout bounds Start; default 3 minutes (a busy 2-core machine).
	StartTimeout time.Duration
	// KeepDir leaves the directory with logs, certificates and kubeconfigs
	// on Stop (also when $INPLACE_KEEP_CLUSTER is set).
	KeepDir bool
	// APIServerFlags and ControllerManagerFlags are appended to the
	// defaults (a later flag wins).
	APIServerFlags         []string
	ControllerManagerFlags []string
	// BindAddress, when set, is the address the API server listens on and
	// advertises instead of 127.0.0.1: a host address that nodes and pods
	// in network namespaces of their own reach (test/realnode). The
	// kubernetes Service's endpoint is then this address, kubelets
	// authenticate as system:node:<name> (Node and RBAC authorization,
	// NodeRestriction admission) and the API server reaches the kubelets
	// with a client certificate of its own.
	BindAddress string
	// ServiceAccountTokens turns on the ServiceAccount admission plugin:
	// pods get their ServiceAccount's token mounted (real nodes), so
	// programs in pods reach the API server, as an install of inplace's
	// manifests does. Off, pods are admitted with no token, and before
	// their namespace's default ServiceAccount exists.
	ServiceAccountTokens bool
}

// Cluster is a running control plane.
type Cluster struct {
	dir        string
	opts       Options
	log        *slog.Logger
	pki        *pki
	server     string
	kubeconfig string
	rest       *rest.Config
	client     kubernetes.Interface
	etcd       *proc.Process
	apiserver  *proc.Process
	kcm        *proc.Process
	started    time.Duration
	stopOnce   sync.Once
}

// Start runs etcd, kube-apiserver and kube-controller-manager and returns
// once the API server is ready and the controllers run. On failure it
// stops what it started and the error carries the processes' log tails.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	t0 := time.Now()
	opts = opts.withDefaults()
	binDir := opts.BinDir
	if binDir == "" {
		var err error
		if binDir, err = FindBinDir(); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "inplace-cluster-")
	if err != nil {
		return nil, fmt.Errorf("start cluster: temp dir: %w", err)
	}
	c := &Cluster{dir: dir, opts: opts, log: opts.Logger}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	if err := c.start(ctx, binDir); err != nil {
		logs := proc.Tails(25, c.etcd, c.apiserver, c.kcm)
		c.Stop()
		return nil, fmt.Errorf("start cluster: %w%s", err, logs)
	}
	c.started = time.Since(t0)
	c.log.Info("control plane ready", "dir", dir, "server", c.server, "took", c.started)
	return c, nil
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 3 * time.Minute
	}
	if os.Getenv("INPLACE_KEEP_CLUSTER") != "" {
		o.KeepDir = true
	}
	return o
}

func (c *Cluster) start(ctx context.Context, binDir string) error {
	var err error
	if c.pki, err = newPKI(c.dir, c.host()); err != nil {
		return err
	}
	t := time.Now()
	if err := c.startEtcd(ctx, filepath.Join(binDir, "etcd")); err != nil {
		return err
	}
	c.log.Debug("etcd started", "took", time.Since(t))
	t = time.Now()
	if err := c.startAPIServer(ctx, filepath.Join(binDir, "kube-apiserver")); err != nil {
		return err
	}
	c.log.Debug("kube-apiserver ready", "took", time.Since(t))
	t = time.Now()
	if err := c.startControllerManager(ctx, filepath.Join(binDir, "kube-controller-manager")); err != nil {
		return err
	}
	c.log.Debug("kube-controller-manager ready", "took", time.Since(t))
	return nil
}

// Stop kills the control plane (controller-manager, API server, etcd) and
// removes its directory unless told to keep it. It is safe to call twice.
func (c *Cluster) Stop() {
	c.stopOnce.Do(func() {
		for _, p := range []*proc.Process{c.kcm, c.apiserver, c.etcd} {
			p.Stop(10 * time.Second)
		}
		if c.opts.KeepDir {
			c.log.Info("control plane stopped, directory kept", "dir", c.dir)
			return
		}
		if err := os.RemoveAll(c.dir); err != nil {
			c.log.Warn("remove cluster dir", "dir", c.dir, "err", err)
		}
	})
}

// RestConfig returns a copy of the admin (system:masters) client config;
// QPS 200, burst 400, JSON content type.
func (c *Cluster) RestConfig() *rest.Config { return rest.CopyConfig(c.rest) }

// Kubeconfig is the path of the admin kubeconfig file.
func (c *Cluster) Kubeconfig() string { return c.kubeconfig }

// Client is an admin clientset (protobuf).
func (c *Cluster) Client() kubernetes.Interface { return c.client }

// Server is the API server's URL, https://<127.0.0.1 or BindAddress>:<port>.
func (c *Cluster) Server() string { return c.server }

// Dir is the directory holding logs, certificates and kubeconfigs.
func (c *Cluster) Dir() string { return c.dir }

// StartDuration is how long Start took.
func (c *Cluster) StartDuration() time.Duration { return c.started }

// CAFile is the path of the cluster CA's certificate (PEM).
func (c *Cluster) CAFile() string { return c.pki.caFile }

// WriteKubeconfig writes to path a kubeconfig for the API server whose
// credentials are a fresh client certificate of user in groups, e.g. a
// kubelet's system:node:<name> in system:nodes.
func (c *Cluster) WriteKubeconfig(path, user string, groups ...string) error {
	kp, err := c.pki.clientCert(user, groups...)
	if err != nil {
		return fmt.Errorf("kubeconfig for %s: %w", user, err)
	}
	_, err = writeKubeconfig(path, c.server, c.pki.ca.cert, credentials{user: user, certPEM: kp.cert, keyPEM: kp.key})
	return err
}

// host is the address the API server listens on.
func (c *Cluster) host() string {
	if c.opts.BindAddress != "" {
		return c.opts.BindAddress
	}
	return "127.0.0.1"
}

// errExited reports that p died while we waited for it.
func errExited(p *proc.Process) error { return p.ErrExited() }

// Pids are the process ids of the control plane by name (etcd,
// kube-apiserver, kube-controller-manager), for a benchmark that reads
// their CPU time.
func (c *Cluster) Pids() map[string]int {
	out := map[string]int{}
	for _, p := range []*proc.Process{c.etcd, c.apiserver, c.kcm} {
		if p != nil {
			out[p.Name()] = p.Pid()
		}
	}
	return out
}
