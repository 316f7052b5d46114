package knative

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	servingv1 "knative.dev/serving/pkg/apis/serving/v1"

	"github.com/inplace-dev/inplace/test/proc"
)

// Function is a Knative Service the node serves as a host process.
type Function struct {
	Name, Namespace string
	// Addr is where the process listens (127.0.0.1:port).
	Addr string
	// Host is the Service's cluster name, routed to Addr by the proxy.
	Host string
	proc *proc.Process
}

// Serve stands in for Knative Serving, for each Knative Service in svcs
// (already created): it runs the Service's one container as a host
// process of bin (the image's entrypoint) with the container's args, env
// and envFrom ConfigMaps, its ConfigMap and Secret volumes written under
// a directory of its own (mount paths in env values and ConfigMap files
// re-rooted there), LISTEN_ADDRESS on a free loopback port, the identity
// of its ServiceAccount (INPLACE_KUBECONFIG), K_SINK from the SinkBinding
// that selects it, and the node's proxy. Once its readiness probe answers,
// the Service's status gets the address Knative Serving would give it.
func (n *Node) Serve(ctx context.Context, bin string, svcs []*unstructured.Unstructured) (map[string]*Function, error) {
	out := map[string]*Function{}
	for _, u := range svcs {
		var svc servingv1.Service
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &svc); err != nil {
			return nil, fmt.Errorf("serve %s: %w", u.GetName(), err)
		}
		f, err := n.serve(ctx, bin, &svc)
		if err != nil {
			return nil, fmt.Errorf("serve %s/%s: %w", svc.Namespace, svc.Name, err)
		}
		out[svc.Name] = f
	}
	return out, nil
}

func (n *Node) serve(ctx context.Context, bin string, svc *servingv1.Service) (*Function, error) {
	spec := svc.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		return nil, fmt.Errorf("%d containers; the host runs one", len(spec.Containers))
	}
	ctr := spec.Containers[0]
	root := filepath.Join(n.dir, "ksvc-"+svc.Name)
	mounts, err := n.volumes(ctx, svc.Namespace, root, spec.Volumes, ctr.VolumeMounts)
	if err != nil {
		return nil, err
	}
	env, err := n.containerEnv(ctx, svc.Namespace, ctr, mounts)
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	f := &Function{Name: svc.Name, Namespace: svc.Namespace, Addr: loopback(ports[0]), Host: ServiceHost(svc.Name, svc.Namespace)}
	sink, err := n.sinkFor(ctx, svc)
	if err != nil {
		return nil, err
	}
	env = append(env, "LISTEN_ADDRESS="+f.Addr, "HTTP_PROXY="+n.proxy.URL(), "NO_PROXY=", "no_proxy=")
	if sink != "" {
		env = append(env, "K_SINK="+sink)
	}
	if sa := spec.ServiceAccountName; sa != "" {
		kubeconfig, _, err := n.World.Cluster.MintKubeconfig(ctx, svc.Namespace, sa)
		if err != nil {
			return nil, err
		}
		env = append(env, "INPLACE_KUBECONFIG="+kubeconfig)
	}
	if f.proc, err = proc.Start(n.dir, "ksvc-"+svc.Name, bin, ctr.Args, env...); err != nil {
		return nil, err
	}
	n.procs = append(n.procs, f.proc)
	if err := n.waitProbe(ctx, f, ctr.ReadinessProbe); err != nil {
		return nil, err
	}
	n.proxy.route(f.Host, f.Addr)
	return f, n.markServed(ctx, svc, f)
}

// containerEnv is the container's env (values only) after its envFrom
// ConfigMaps, with mount paths re-rooted and LISTEN_ADDRESS left to Serve.
func (n *Node) containerEnv(ctx context.Context, ns string, ctr corev1.Container, mounts map[string]string) ([]string, error) {
	var env []string
	for _, from := range ctr.EnvFrom {
		if from.ConfigMapRef == nil {
			return nil, fmt.Errorf("envFrom: only configMapRef is supported on the host")
		}
		cm, err := n.World.Client().CoreV1().ConfigMaps(ns).Get(ctx, from.ConfigMapRef.Name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("envFrom: %w", err)
		}
		for k, v := range cm.Data {
			env = append(env, from.Prefix+k+"="+v)
		}
	}
	for _, e := range ctr.Env {
		if e.ValueFrom != nil {
			return nil, fmt.Errorf("env %s: valueFrom is not supported on the host", e.Name)
		}
		if e.Name == "LISTEN_ADDRESS" || e.Name == "PORT" {
			continue
		}
		env = append(env, e.Name+"="+reroot(e.Value, mounts))
	}
	return env, nil
}

// volumes writes the ConfigMap and Secret volumes the container mounts
// under root, and returns mount path → local directory.
func (n *Node) volumes(ctx context.Context, ns, root string, vols []corev1.Volume, vms []corev1.VolumeMount) (map[string]string, error) {
	mounts := map[string]string{}
	files := map[string]map[string][]byte{}
	for _, vm := range vms {
		var data map[string][]byte
		for _, v := range vols {
			if v.Name != vm.Name {
				continue
			}
			var err error
			if data, err = n.volumeData(ctx, ns, v); err != nil {
				return nil, err
			}
		}
		local := filepath.Join(root, vm.MountPath)
		mounts[vm.MountPath] = local
		files[local] = data
	}
	for dir, data := range files {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		for k, v := range data {
			if err := os.WriteFile(filepath.Join(dir, k), []byte(reroot(string(v), mounts)), 0o600); err != nil {
				return nil, err
			}
		}
	}
	return mounts, nil
}

func (n *Node) volumeData(ctx context.Context, ns string, v corev1.Volume) (map[string][]byte, error) {
	c := n.World.Client().CoreV1()
	data := map[string][]byte{}
	switch {
	case v.ConfigMap != nil:
		cm, err := c.ConfigMaps(ns).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		for k, s := range cm.Data {
			data[k] = []byte(s)
		}
	case v.Secret != nil:
		s, err := c.Secrets(ns).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
		if err != nil && !(v.Secret.Optional != nil && *v.Secret.Optional) {
			return nil, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		if err == nil {
			data = s.Data
		}
	default:
		return nil, fmt.Errorf("volume %s: only configMap and secret volumes are supported on the host", v.Name)
	}
	return data, nil
}

// reroot replaces each mount path in s by its local directory.
func reroot(s string, mounts map[string]string) string {
	for path, local := range mounts {
		s = strings.ReplaceAll(s, path, local)
	}
	return s
}

// waitProbe waits until the readiness probe's path answers 200.
func (n *Node) waitProbe(ctx context.Context, f *Function, probe *corev1.Probe) error {
	path := "/"
	if probe != nil && probe.HTTPGet != nil {
		path = probe.HTTPGet.Path
	}
	url := "http://" + f.Addr + path
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if done, err := f.proc.Exited(); done {
			return false, fmt.Errorf("exited: %v", err)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("not ready at %s: %w\n%s", url, err, f.proc.Tail(30))
	}
	return nil
}

// markServed gives the Service the status Knative Serving would: Ready,
// addressable at its cluster name.
func (n *Node) markServed(ctx context.Context, svc *servingv1.Service, f *Function) error {
	r := n.apply.dyn.Resource(Services).Namespace(svc.Namespace)
	u, err := r.Get(ctx, svc.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	url := "http://" + f.Host
	now := metav1.Now().UTC().Format(time.RFC3339)
	u.Object["status"] = map[string]any{
		"observedGeneration": u.GetGeneration(),
		"url":                url,
		"address":            map[string]any{"url": url},
		"conditions": []any{
			map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": now},
			map[string]any{"type": "ConfigurationsReady", "status": "True", "lastTransitionTime": now},
			map[string]any{"type": "RoutesReady", "status": "True", "lastTransitionTime": now},
		},
	}
	_, err = r.UpdateStatus(ctx, u, metav1.UpdateOptions{})
	return err
}

// Stop ends the function's process (a Service scaled to zero); Check
// reports it from then on.
func (f *Function) Stop() { f.proc.Stop(5 * time.Second) }
