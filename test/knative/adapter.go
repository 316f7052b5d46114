package knative

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/inplace-dev/inplace/test/proc"
)

// adapterRunner runs the ApiServerSource adapter of each Deployment the
// eventing controller makes for an ApiServerSource, as a host process with
// that Deployment's environment and the identity of its ServiceAccount
// (so the source's RBAC is what the API server enforces). A changed
// environment (the controller rewrites it, e.g. when a namespace matching
// the source's selector appears) restarts the process, as a rollout would.
type adapterRunner struct {
	node *Node

	mu      sync.Mutex
	running map[string]*adapter // namespace/name of the Deployment
}

type adapter struct {
	proc *proc.Process
	env  []string
}

func (r *adapterRunner) start(ctx context.Context) error {
	f := informers.NewSharedInformerFactory(r.node.World.Client(), 0)
	inf := f.Apps().V1().Deployments().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { r.sync(ctx, o) },
		UpdateFunc: func(_, o any) { r.sync(ctx, o) },
		DeleteFunc: func(o any) {
			if d, ok := o.(*appsv1.Deployment); ok {
				r.stop(d.Namespace + "/" + d.Name)
			}
		},
	})
	if err != nil {
		return err
	}
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	return nil
}

// sync starts, restarts or leaves the adapter of d.
func (r *adapterRunner) sync(ctx context.Context, o any) {
	d, ok := o.(*appsv1.Deployment)
	if !ok || len(d.Spec.Template.Spec.Containers) != 1 || d.Spec.Template.Spec.Containers[0].Image != r.node.AdapterImage() {
		return
	}
	key := d.Namespace + "/" + d.Name
	env, err := containerEnv(d)
	if err != nil {
		r.node.log.Error("apiserversource adapter", "deployment", key, "err", err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if a := r.running[key]; a != nil && slices.Equal(a.env, env) {
		return
	}
	if a := r.running[key]; a != nil {
		a.proc.Stop(5 * time.Second)
	}
	sa := d.Spec.Template.Spec.ServiceAccountName
	kubeconfig, _, err := r.node.World.Cluster.MintKubeconfig(ctx, d.Namespace, sa)
	if err != nil {
		r.node.log.Error("apiserversource adapter", "deployment", key, "err", err)
		return
	}
	ports, err := freePorts(1)
	if err != nil {
		return
	}
	all := append([]string{"KUBECONFIG=" + kubeconfig, "HTTP_PROXY=" + r.node.proxy.URL(), "NO_PROXY=", "no_proxy=",
		"PROFILING_PORT=" + strconv.Itoa(ports[0])}, env...)
	p, err := proc.Start(r.node.dir, "adapter-"+d.Name, filepath.Join(r.node.bin, "apiserver_receive_adapter"), nil, all...)
	if err != nil {
		r.node.log.Error("apiserversource adapter", "deployment", key, "err", err)
		return
	}
	r.node.log.Info("apiserversource adapter started", "deployment", key, "serviceAccount", sa)
	r.running[key] = &adapter{proc: p, env: env}
}

// containerEnv is the Deployment's container environment, with the pod
// fields Knative refers to resolved.
func containerEnv(d *appsv1.Deployment) ([]string, error) {
	var env []string
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		v := e.Value
		if e.ValueFrom != nil {
			var err error
			if v, err = fieldValue(d, e.ValueFrom); err != nil {
				return nil, fmt.Errorf("env %s: %w", e.Name, err)
			}
		}
		env = append(env, e.Name+"="+v)
	}
	return env, nil
}

func fieldValue(d *appsv1.Deployment, src *corev1.EnvVarSource) (string, error) {
	if src.FieldRef == nil {
		return "", fmt.Errorf("only fieldRef is supported on the host")
	}
	switch src.FieldRef.FieldPath {
	case "metadata.namespace":
		return d.Namespace, nil
	case "metadata.name":
		return d.Name + "-host", nil
	}
	return "", fmt.Errorf("fieldRef %s is not supported on the host", src.FieldRef.FieldPath)
}

func (r *adapterRunner) stop(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a := r.running[key]; a != nil {
		a.proc.Stop(5 * time.Second)
		delete(r.running, key)
	}
}

func (r *adapterRunner) stopAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, a := range r.running {
		a.proc.Stop(5 * time.Second)
		delete(r.running, k)
	}
}

func (r *adapterRunner) logs(lines int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ps []*proc.Process
	for _, a := range r.running {
		ps = append(ps, a.proc)
	}
	return proc.Tails(lines, ps...)
}
