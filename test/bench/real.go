package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/inplace-dev/inplace/test/cluster"
	"github.com/inplace-dev/inplace/test/images"
	"github.com/inplace-dev/inplace/test/images/settings"
	"github.com/inplace-dev/inplace/test/realnode"
	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/world"
)

// realNodes marks a scenario that runs on real nodes.
const realNodes = "real"

// The real pods' own times: the app is Ready appStart after it starts and
// keeps serving appStop once asked to stop, in a preStop sleep hook (the
// kubelet sends SIGTERM after it, and the app then finishes its requests
// and exits), the sidecar is Ready sidecarStart after it starts, and the
// init container runs settings.DefaultInit's second. Every run (in place,
// native, floor) runs the same pods. The hook outlasts an endpoint's way
// to every kube-proxy: the EndpointSlice change, then a kube-proxy that
// synced just before it applies it only after its --iptables-min-sync-period
// (1 s), so a 1 s hook let a restart taken up at once refuse requests in
// every strategy (docs/performance.md, "The same node twice in a row").
const (
	appStart     = 500 * time.Millisecond
	appStop      = 2 * time.Second
	sidecarStart = time.Second
	realImageMB  = 20
	realFreshMB  = 50
	realNodeN    = 2
)

// realScenarios are the rollouts on real nodes: the one-container app and
// the shape a mesh-injected pod has (app + sidecar + init container), both
// with their new image on the nodes; a StatefulSet with a volume per pod;
// the app whose new image no node has (a fresh one per run); each with the
// floor.
//
// The StatefulSet's goal is the issue's, set for a network volume that
// takes seconds to attach to a recreated pod; the hostPath volume here
// costs the native run nothing to attach, so what in place saves is the
// StatefulSet controller's wait for each old pod to be gone before it
// makes the new one. The uncached goal is the simulated one's: in place
// pulls on every node before its first patch, while the native run pulls
// when a new pod lands on a node.
func realScenarios(o options) []scenario {
	n := int32(o.realPods)
	return []scenario{
		{Name: "real-app", Title: "Real nodes, one-container app, image cached", Kind: "Deployment", Replicas: n,
			MaxUnavailable: quarter(n), Cached: true, Floor: true, Target: 1.0, Nodes: realNodes},
		{Name: "real-mesh", Title: "Real nodes, app + sidecar + init container, image cached", Kind: "Deployment", Replicas: n,
			MaxUnavailable: quarter(n), Cached: true, Floor: true, Target: 0.7, TargetDefaults: 1.0, Nodes: realNodes, Mesh: true},
		{Name: "real-sts-pvc", Title: "Real nodes, StatefulSet with a PVC per pod, image cached", Kind: "StatefulSet", Replicas: n,
			MaxUnavailable: max(int(n)/2, 1), Cached: true, Floor: true, Target: 0.25, Nodes: realNodes},
		{Name: "real-uncached", Title: "Real nodes, one-container app, image not on the nodes", Kind: "Deployment", Replicas: n,
			MaxUnavailable: quarter(n), Floor: true, Target: 0.5, Nodes: realNodes, FreshMB: realFreshMB},
	}
}

// realNames parses -real-scenarios: names of real-node scenarios.
func realNames(list string) ([]string, error) {
	var out []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if !slices.ContainsFunc(realScenarios(options{realPods: 1}), func(sc scenario) bool { return sc.Name == n }) {
			return nil, fmt.Errorf("-real-scenarios: %q is not a real-node scenario", n)
		}
		out = append(out, n)
	}
	return out, nil
}

// chosenReal are the real-node scenarios the options ask for.
func chosenReal(o options) []scenario {
	scs := realScenarios(o)
	if len(o.realOnly) == 0 {
		return scs
	}
	return slices.DeleteFunc(scs, func(sc scenario) bool { return !slices.Contains(o.realOnly, sc.Name) })
}

// runReal runs the real-node scenarios on a world of realNodeN real nodes;
// on a machine that cannot run them it says why in the report.
func runReal(ctx context.Context, o options, rep *report, log *slog.Logger) error {
	dir, err := cluster.FindBinDir()
	if err == nil {
		err = realnode.Check(dir)
	}
	if err != nil {
		rep.RealUnavailable = err.Error()
		return nil
	}
	scs := chosenReal(o)
	rep.Scenarios, rep.RealNodes = append(rep.Scenarios, scs...), describeReal()
	prof := profile{Name: "real", ImageMB: realImageMB, Nodes: world.NodesReal}
	log.Info("starting the world", "profile", prof.Name)
	p, err := startPart(ctx, o, prof, realNodeN, 110, log)
	if err != nil {
		return err
	}
	defer p.stop()
	if p.shape, err = pushShape(ctx, p.w.Registry); err != nil {
		return err
	}
	if err := p.runProject(ctx, filepath.Join(p.dir, "project"), 1); err != nil {
		return err
	}
	return p.runScenarios(ctx, rep, scs, log)
}

// podShape are the images of a realistic pod's containers beside the app.
type podShape struct{ Sidecar, Init string }

// pushShape pushes the sidecar and the init container's images.
func pushShape(ctx context.Context, reg *registry.Registry) (podShape, error) {
	side, init := "inplace-bench/mesh-sidecar", "inplace-bench/mesh-init"
	if _, err := reg.Push(ctx, side, "1.0.0"); err != nil {
		return podShape{}, err
	}
	if _, err := reg.Push(ctx, init, "1.0.0", registry.WithProgram(images.InitProgram)); err != nil {
		return podShape{}, err
	}
	return podShape{Sidecar: reg.Host() + "/" + side + ":1.0.0", Init: reg.Host() + "/" + init + ":1.0.0"}, nil
}

// realContainers makes the pod's app Ready on its /readyz, with its start
// time and its preStop drain, and adds the shape's sidecar and init container.
func realContainers(spec *corev1.PodSpec, s podShape) {
	app := &spec.Containers[0]
	app.Env = append(app.Env, corev1.EnvVar{Name: settings.AppPrefix + settings.StartDelayVar, Value: appStart.String()})
	app.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: int64(appStop / time.Second)}}}
	app.ReadinessProbe = readyz(8080)
	if s.Sidecar == "" {
		return
	}
	small := corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}}
	spec.Containers = append(spec.Containers, corev1.Container{Name: "sidecar", Image: s.Sidecar,
		ImagePullPolicy: corev1.PullIfNotPresent, Resources: small, ReadinessProbe: readyz(9090),
		Ports: []corev1.ContainerPort{{Name: "proxy", ContainerPort: 9090}},
		Env:   []corev1.EnvVar{{Name: settings.SidecarPrefix + settings.StartDelayVar, Value: sidecarStart.String()}}})
	spec.InitContainers = append(spec.InitContainers, corev1.Container{Name: "init", Image: s.Init,
		ImagePullPolicy: corev1.PullIfNotPresent, Resources: small})
}

func readyz(port int32) *corev1.Probe {
	return &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{
		HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(port)}}}
}

// describeReal is what the real rows ran on.
func describeReal() string {
	return fmt.Sprintf("%d real nodes (kubelet v1.35.4, containerd, runc, CNI bridge, kube-proxy; kube-scheduler, CoreDNS); "+
		"the app starts serving %s after its start and drains %s in a preStop sleep hook before SIGTERM, the sidecar is Ready %s after its start, "+
		"the init container runs %s; images of %d MiB, already on the nodes and listed in their status, except real-uncached's new image: a fresh one per run "+
		"with %d MiB of random bytes in a layer of its own, pulled from the test registry on the same machine; "+
		"real-sts-pvc's volumes are hostPath PersistentVolumes, one per pod, bound ahead", realNodeN, appStart, appStop, sidecarStart,
		settings.DefaultInit.Sleep, realImageMB, realFreshMB)
}
