package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/test/cluster"
	"github.com/inplace-dev/inplace/test/kubelet"
	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/world"
)

// part is one test world with what the benchmark runs on it.
type part struct {
	opts    options
	prof    profile
	w       *world.World
	audit   *auditLog
	proxy   *hookProxy
	client  kubernetes.Interface // the benchmark's own (user agent inplace-bench)
	dyn     dynamic.Interface
	dir     string
	log     *slog.Logger
	project *project
	out     *outcomes
	fences  int
	// shape are the images of the realistic pod's other containers (real
	// nodes only).
	shape podShape
}

// maxUnavailableGate enables maxUnavailable for StatefulSets (beta and off
// by default in v1.35), so that the native rolling update can run at the
// same max-unavailable as in place.
const maxUnavailableGate = "--feature-gates=MaxUnavailableStatefulSet=true"

// startPart starts a world for one profile: nodes of the profile's
// timings, the audit log on, the webhook proxy in front of the receiver.
func startPart(ctx context.Context, o options, prof profile, nodes, podsPerNode int, log *slog.Logger) (*part, error) {
	dir, err := os.MkdirTemp("", "inplace-bench-")
	if err != nil {
		return nil, err
	}
	flags, auditPath, err := auditFlags(dir)
	if err != nil {
		return nil, err
	}
	t := prof.Timings
	wo := world.Options{Logger: log, Nodes: prof.Nodes, KubeletVerbosity: kubeletLevel,
		ClusterOptions: cluster.Options{APIServerFlags: append(flags, maxUnavailableGate), ControllerManagerFlags: []string{maxUnavailableGate}},
		KubeletOptions: kubelet.Options{Nodes: nodes, Timings: &t,
			Capacity: map[string]resource.Quantity{"pods": *resource.NewQuantity(int64(podsPerNode), resource.DecimalSI)}},
	}
	p := &part{opts: o, prof: prof, dir: dir, log: log, audit: &auditLog{path: auditPath}}
	if p.w, err = world.Start(ctx, wo); err != nil {
		return nil, err
	}
	rc := p.w.RestConfig()
	rc.UserAgent, rc.QPS, rc.Burst = benchUserAgent, 1000, 2000
	if p.dyn, err = dynamic.NewForConfig(rc); err != nil {
		p.stop()
		return nil, err
	}
	rc.ContentType = "application/vnd.kubernetes.protobuf"
	if p.client, err = kubernetes.NewForConfig(rc); err != nil {
		p.stop()
		return nil, err
	}
	if p.proxy, err = startProxy(); err != nil {
		p.stop()
		return nil, err
	}
	if err := p.namespace(ctx, "inplace-system"); err != nil {
		p.stop()
		return nil, err
	}
	return p, pushBase(ctx, p.w.Registry, prof.ImageMB)
}

// runProject (re)starts the project with n replicas in dir and follows its
// rollouts.
func (p *part) runProject(ctx context.Context, dir string, replicas int) error {
	p.stopProject()
	pr, err := startProject(ctx, projectOptions{bin: p.opts.bin, kubeconfig: p.w.Cluster.Kubeconfig(),
		registryHost: p.w.Registry.Host(), dir: dir, replicas: replicas})
	if err != nil {
		return err
	}
	p.project = pr
	if p.out, err = followOutcomes(pr); err != nil {
		return err
	}
	p.proxy.setTarget(pr.hooksURL())
	// Pulls and layer mounts are not pushes: the receiver would only
	// acknowledge them, and they would use up its rate limit.
	return p.w.Registry.SetNotify(registry.Notify{URL: p.proxy.url, Timeout: 10 * time.Second, Backoff: 500 * time.Millisecond,
		Headers: http.Header{"Authorization": {"Bearer " + pr.token}}, IgnoreActions: []string{"pull", "mount"}})
}

func (p *part) stopProject() {
	p.out.close()
	if p.project != nil {
		p.project.stop()
	}
	p.project, p.out = nil, nil
}

// benchProcess names the bench's own CPU time: its simulated nodes,
// watches and webhook proxy.
const benchProcess = "bench (simulated nodes)"

// controlPlanePrefix names one control-plane process's CPU time
// ("control plane: kube-apiserver"), beside the control plane's total.
const controlPlanePrefix = "control plane: "

// meter reads the CPU time of the project and of the control plane, in
// total and by process (and, on hollow nodes, of the nodes and
// kube-scheduler).
func (p *part) meter() cpuMeter {
	m := cpuMeter{}
	if p.project != nil {
		m["inplace"] = p.project.pids()
	}
	for name, pid := range p.w.Cluster.Pids() {
		m["control plane"] = append(m["control plane"], pid)
		m[controlPlanePrefix+name] = []int{pid}
	}
	if p.w.Hollow != nil {
		for _, pid := range p.w.Hollow.Pids() {
			m["nodes"] = append(m["nodes"], pid)
		}
	}
	if p.w.Real != nil {
		for _, pid := range p.w.Real.Pids() {
			m["nodes"] = append(m["nodes"], pid)
		}
	}
	if p.w.Hollow == nil && p.w.Real == nil { // simulated nodes run in this process
		m[benchProcess] = []int{os.Getpid()}
	}
	return m
}

// namespace creates a namespace (kept until the world stops).
func (p *part) namespace(ctx context.Context, name string) error {
	_, err := p.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !isExists(err) {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	return nil
}

// requests returns what the API server logged in [from, to]: it asks for
// a name nobody has (a fence) and reads the log until the fence is in it,
// so every request answered before it is too.
func (p *part) requests(ctx context.Context, from, to time.Time) ([]request, error) {
	p.fences++
	fence := fmt.Sprintf("inplace-bench-fence-%d", p.fences)
	_, _ = p.client.CoreV1().Namespaces().Get(ctx, fence, metav1.GetOptions{})
	deadline := time.Now().Add(time.Minute)
	for {
		if err := p.audit.read(); err != nil {
			return nil, err
		}
		if p.audit.seen(fence) {
			return p.audit.between(from, to), nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("audit log: the fence %s never showed", fence)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *part) stop() {
	p.stopProject()
	if p.proxy != nil {
		p.proxy.close()
	}
	if p.w != nil {
		_ = p.w.Stop()
	}
	if os.Getenv("INPLACE_KEEP_CLUSTER") == "" {
		_ = os.RemoveAll(p.dir)
	} else {
		p.log.Info("benchmark directory kept", "dir", p.dir, "audit", filepath.Join(p.dir, "audit.log"))
	}
}
