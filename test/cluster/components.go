package cluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/inplace-dev/inplace/test/proc"
	"k8s.io/client-go/kubernetes"
)

// startEtcd runs etcd listening on a unix socket in the cluster dir and
// waits for the socket to appear.
func (c *Cluster) startEtcd(ctx context.Context, bin string) error {
	sock := filepath.Join(c.dir, "etcd.sock")
	args := []string{
		"--name=inplace",
		"--data-dir=" + filepath.Join(c.dir, "etcd"),
		"--listen-client-urls=unix://" + sock,
		"--advertise-client-urls=http://127.0.0.111:0", // unused; unix URLs are not accepted here
		"--listen-peer-urls=http://127.0.0.1:0",
		"--listen-metrics-urls=",
		"--unsafe-no-fsync=true",
		"--quota-backend-bytes=" + strconv.Itoa(4<<30),
		"--log-level=warn",
	}
	p, err := proc.Start(c.dir, "etcd", bin, args)
	if err != nil {
		return err
	}
	c.etcd = p
	return waitFor(ctx, 30*time.Second, func(context.Context) (bool, error) {
		if err := errExited(p); err != nil {
			return false, err
		}
		_, err := os.Stat(sock)
		return err == nil, nil
	})
}

// startAPIServer runs kube-apiserver on a free loopback port (trying
// another port if it was taken meanwhile) and waits for /readyz.
func (c *Cluster) startAPIServer(ctx context.Context, bin string) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = c.tryAPIServer(ctx, bin); err == nil || !strings.Contains(c.apiserver.Tail(40), "address already in use") {
			return err
		}
		c.log.Info("kube-apiserver port taken, retrying")
	}
	return err
}

func (c *Cluster) tryAPIServer(ctx context.Context, bin string) error {
	port, err := freePortOn(c.host())
	if err != nil {
		return err
	}
	c.server = "https://" + net.JoinHostPort(c.host(), strconv.Itoa(port))
	if err := c.writeAdminKubeconfig(); err != nil {
		return err
	}
	args, err := c.apiServerArgs(port)
	if err != nil {
		return err
	}
	p, err := proc.Start(c.dir, "kube-apiserver", bin, append(args, c.opts.APIServerFlags...))
	if err != nil {
		return err
	}
	c.apiserver = p
	return waitFor(ctx, 0, func(ctx context.Context) (bool, error) {
		if err := errExited(p); err != nil {
			return false, err
		}
		body, err := c.client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && string(body) == "ok", nil
	})
}

func (c *Cluster) apiServerArgs(port int) ([]string, error) {
	args := []string{
		"--etcd-servers=unix://" + filepath.Join(c.dir, "etcd.sock"),
		"--bind-address=" + c.host(),
		"--advertise-address=" + c.host(),
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(c.dir, "apiserver-certs"),
		"--tls-cert-file=" + c.pki.servingCrt,
		"--tls-private-key-file=" + c.pki.servingKey,
		"--client-ca-file=" + c.pki.caFile,
		"--authorization-mode=" + c.authorizationMode(),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + c.pki.saPub,
		"--service-account-signing-key-file=" + c.pki.saKey,
		"--service-cluster-ip-range=10.0.0.0/16",
		"--endpoint-reconciler-type=" + c.endpointReconciler(),
		"--allow-privileged=true",
		"--profiling=false",
	}
	if !c.opts.ServiceAccountTokens {
		args = append(args, "--disable-admission-plugins=ServiceAccount")
	}
	if c.opts.BindAddress == "" {
		return args, nil
	}
	nodeArgs, err := c.nodeFacingArgs()
	if err != nil {
		return nil, err
	}
	return append(args, nodeArgs...), nil
}

// endpointReconciler keeps the kubernetes Service's endpoint at the
// advertised address with real nodes; a loopback address is not a valid
// endpoint, so otherwise there is none.
func (c *Cluster) endpointReconciler() string {
	if c.opts.BindAddress != "" {
		return "lease"
	}
	return "none"
}

// authorizationMode is RBAC, and with real nodes Node first (the kubelets'
// own authorizer).
func (c *Cluster) authorizationMode() string {
	if c.opts.BindAddress != "" {
		return "Node,RBAC"
	}
	return "RBAC"
}

// nodeFacingArgs are the API server's flags for real nodes: the kubelets'
// admission plugin, and a client certificate for the kubelets' API (logs,
// exec).
func (c *Cluster) nodeFacingArgs() ([]string, error) {
	kp, err := c.pki.clientCert("kube-apiserver-kubelet-client", "system:masters")
	if err != nil {
		return nil, err
	}
	crt, key := filepath.Join(c.dir, "kubelet-client.crt"), filepath.Join(c.dir, "kubelet-client.key")
	if err := writePair(kp, crt, key); err != nil {
		return nil, err
	}
	return []string{
		"--enable-admission-plugins=NodeRestriction",
		"--kubelet-client-certificate=" + crt,
		"--kubelet-client-key=" + key,
		"--kubelet-preferred-address-types=InternalIP",
	}, nil
}

// writeAdminKubeconfig issues the admin client certificate
// (O=system:masters) and writes admin.kubeconfig.
func (c *Cluster) writeAdminKubeconfig() error {
	kp, err := c.pki.clientCert("inplace-admin", "system:masters")
	if err != nil {
		return err
	}
	c.kubeconfig = filepath.Join(c.dir, "admin.kubeconfig")
	rc, err := writeKubeconfig(c.kubeconfig, c.server, c.pki.ca.cert,
		credentials{user: "inplace-admin", certPEM: kp.cert, keyPEM: kp.key})
	if err != nil {
		return err
	}
	c.rest = rc
	if c.client, err = kubernetes.NewForConfig(protobuf(rc)); err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	return nil
}

// startControllerManager runs kube-controller-manager as
// system:kube-controller-manager and waits for its /healthz and for the
// serviceaccount controller to have made the default ServiceAccount.
func (c *Cluster) startControllerManager(ctx context.Context, bin string) error {
	kp, err := c.pki.clientCert("system:kube-controller-manager")
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(c.dir, "kube-controller-manager.kubeconfig")
	_, err = writeKubeconfig(kubeconfig, c.server, c.pki.ca.cert,
		credentials{user: "system:kube-controller-manager", certPEM: kp.cert, keyPEM: kp.key})
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	args := append(c.controllerManagerArgs(kubeconfig, port), c.opts.ControllerManagerFlags...)
	p, err := proc.Start(c.dir, "kube-controller-manager", bin, args)
	if err != nil {
		return err
	}
	c.kcm = p
	return c.waitControllerManager(ctx, p, port)
}

func (c *Cluster) controllerManagerArgs(kubeconfig string, port int) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--controllers=*",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + c.pki.saKey,
		"--root-ca-file=" + c.pki.caFile,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(c.dir, "kcm-certs"),
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		"--node-monitor-period=1s",
		"--profiling=false",
	}
}

func (c *Cluster) waitControllerManager(ctx context.Context, p *proc.Process, port int) error {
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // self-signed serving cert, loopback only
	}}
	url := fmt.Sprintf("https://127.0.0.1:%d/healthz", port)
	return waitFor(ctx, 0, func(ctx context.Context) (bool, error) {
		if err := errExited(p); err != nil {
			return false, err
		}
		if !HTTPOK(ctx, hc, url) {
			return false, nil
		}
		_, err := c.client.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, nil
	})
}

// HTTPOK reports whether a GET of url answers 200 OK.
func HTTPOK(ctx context.Context, hc *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// waitFor polls cond every 100ms until it is true, fails, or ctx (bounded
// by timeout when non-zero) ends.
func waitFor(ctx context.Context, timeout time.Duration, cond wait.ConditionWithContextFunc) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	return wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, cond)
}

func freePort() (int, error) { return freePortOn("127.0.0.1") }

func freePortOn(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
