// Command hollow-node runs the real kubelet's code as a node of the test
// world, the way kubemark's hollow node does (a fake CRI runtime, a fake
// cAdvisor), with what kubemark leaves out and the test world needs: the
// kubelet's real prober and event recorder, its ports on loopback (one per
// node), pulls resolved through the test registry (a missing tag fails with
// ErrImagePull, imageID is host/repo@sha256:<digest>), containers that exit
// (an image labelled to crash exits 1; init containers and pods that do not
// restart run to completion), a pod IP per pod, and pull, sandbox, volume
// attach, start and stop times.
package main

import (
	"context"
	goflag "flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"go.opentelemetry.io/otel/trace/noop"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	cliflag "k8s.io/component-base/cli/flag"
	remote "k8s.io/cri-client/pkg"
	fakeremote "k8s.io/cri-client/pkg/fake"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	"k8s.io/kubernetes/pkg/kubemark"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// timings are how long the node takes for what a real node does.
type timings struct {
	PullFixed, PullPerMiB, Sandbox, VolumeAttach, Start, Stop, Run, CrashAfter time.Duration
}

type options struct {
	name, kubeconfig, rootDir, podCIDR string
	port, maxPods                      int
	cpu, memory                        string
	registries                         []string
	labels                             map[string]string
	qps                                float32
	t                                  timings
}

func main() {
	o := options{labels: map[string]string{}}
	fs := pflag.NewFlagSet("hollow-node", pflag.ExitOnError)
	fs.StringVar(&o.name, "name", "", "node name (required)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the API server (required)")
	fs.StringVar(&o.rootDir, "root-dir", "", "the kubelet's root directory, also holding the CRI socket (required)")
	fs.StringVar(&o.podCIDR, "pod-cidr", "10.245.0.0/24", "pod IPs come from this range")
	fs.IntVar(&o.port, "port", 0, "the kubelet's HTTPS port on 127.0.0.1 (required)")
	fs.IntVar(&o.maxPods, "max-pods", 110, "pods the node accepts")
	fs.StringVar(&o.cpu, "cpu", "32", "node CPU capacity")
	fs.StringVar(&o.memory, "memory", "128Gi", "node memory capacity")
	fs.StringSliceVar(&o.registries, "registry", nil, "host:port of a registry the node can pull from over HTTP (repeatable)")
	fs.Var(cliflag.NewMapStringString(&o.labels), "node-labels", "labels to add to the node")
	fs.Float32Var(&o.qps, "kube-api-qps", 50, "the kubelet's API QPS (burst is twice it)")
	fs.DurationVar(&o.t.PullFixed, "pull-fixed", 20*time.Millisecond, "fixed cost of a pull")
	fs.DurationVar(&o.t.PullPerMiB, "pull-per-mib", 2*time.Millisecond, "added per MiB of an image the node does not have")
	fs.DurationVar(&o.t.Sandbox, "sandbox", 0, "time a pod sandbox takes to be created, its network set up included")
	fs.DurationVar(&o.t.VolumeAttach, "volume-attach", 0,
		"time the volumes of a pod that mounts a PersistentVolumeClaim take to be attached and mounted (charged before its first sandbox)")
	fs.DurationVar(&o.t.Start, "start", 0, "time a container takes to start")
	fs.DurationVar(&o.t.Stop, "stop", 20*time.Millisecond, "time a running container takes to stop (bounded by its grace period)")
	fs.DurationVar(&o.t.Run, "run", 50*time.Millisecond, "how long a container that runs to completion runs")
	fs.DurationVar(&o.t.CrashAfter, "crash-after", 50*time.Millisecond, "how long a container of a crashing image runs")
	klogFlags := goflag.NewFlagSet("klog", goflag.ExitOnError)
	klog.InitFlags(klogFlags)
	fs.AddGoFlagSet(klogFlags)
	_ = fs.Parse(os.Args[1:])
	if o.name == "" || o.kubeconfig == "" || o.rootDir == "" || o.port == 0 {
		fmt.Fprintln(os.Stderr, "hollow-node: --name, --kubeconfig, --root-dir and --port are required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, o); err != nil {
		klog.ErrorS(err, "hollow node failed")
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	client, heartbeat, err := clients(o)
	if err != nil {
		return err
	}
	ips, err := newIPAM(o.podCIDR)
	if err != nil {
		return err
	}
	machine, err := newMachine(o)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.rootDir, 0o755); err != nil {
		return err
	}
	// The kubelet's scratch directories go under the root directory.
	if err := os.Setenv("TMPDIR", o.rootDir); err != nil {
		return err
	}
	endpoint := "unix://" + filepath.Join(o.rootDir, "cri.sock")
	fake := fakeremote.NewFakeRemoteRuntime()
	if err := fake.Start(endpoint); err != nil {
		return fmt.Errorf("start fake runtime: %w", err)
	}
	defer fake.Stop()
	go forgetCalls(ctx, fake.RuntimeService)
	logger := klog.Background()
	remoteRuntime, err := remote.NewRemoteRuntimeService(endpoint, 15*time.Second, noop.NewTracerProvider(), &logger)
	if err != nil {
		return fmt.Errorf("runtime service: %w", err)
	}
	pods := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
		lo.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", o.name).String()
	}))
	lister := pods.Core().V1().Pods().Lister()
	pods.Start(ctx.Done())
	images := newImageService(&registryClient{http: &http.Client{Timeout: 30 * time.Second}, hosts: setOf(o.registries)}, o.t)
	rt := &runtimeService{RuntimeService: remoteRuntime, fake: fake.RuntimeService, images: images, timings: o.t, ips: ips,
		containers: map[string]containerInfo{}, attached: map[string]bool{},
		pods: func(ns, name string) *v1Pod {
			p, _ := lister.Pods(ns).Get(name)
			return p
		}}

	f, c := kubemark.GetHollowKubeletConfig(&kubemark.HollowKubeletOptions{
		NodeName: o.name, KubeletPort: o.port, MaxPods: o.maxPods, NodeLabels: o.labels,
	})
	f.RootDirectory = o.rootDir
	f.CertDirectory = filepath.Join(o.rootDir, "pki")
	c.Address = "127.0.0.1" // kubemark binds 0.0.0.0
	c.ReadOnlyPort = 0      // and 10255 on every node
	c.HealthzPort = 0       // and 10248
	c.ContainerRuntimeEndpoint = endpoint
	c.ImageServiceEndpoint = endpoint
	c.ClusterDNS = []string{"10.96.0.10"} // no MissingClusterDNS warning per pod
	c.ClusterDomain = "cluster.local"
	c.KubeAPIQPS, c.KubeAPIBurst = int32(o.qps), int32(2*o.qps)

	hk := kubemark.NewHollowKubelet(f, c, client, heartbeat, machine, images, rt, cm.NewStubContainerManager())
	// kubemark's fakes that hide what the real kubelet does: its prober
	// calls every container ready, its recorder drops every Event.
	hk.KubeletDeps.ProbeManager = nil
	hk.KubeletDeps.Recorder = nil
	hk.KubeletDeps.EventClient = client.CoreV1()
	go func() {
		<-ctx.Done()
		klog.InfoS("hollow node stopping", "node", o.name)
		klog.Flush()
		os.Exit(0)
	}()
	hk.Run(ctx) // never returns
	return nil
}

func clients(o options) (*clientset.Clientset, *clientset.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.QPS, cfg.Burst = o.qps, int(2*o.qps)
	cfg.UserAgent = "hollow-kubelet/" + o.name
	client, err := clientset.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	hb := *cfg
	hb.QPS, hb.Timeout = -1, 10*time.Second
	heartbeat, err := clientset.NewForConfig(&hb)
	return client, heartbeat, err
}

func newMachine(o options) (*machine, error) {
	cpu, err := resource.ParseQuantity(o.cpu)
	if err != nil {
		return nil, fmt.Errorf("--cpu: %w", err)
	}
	mem, err := resource.ParseQuantity(o.memory)
	if err != nil {
		return nil, fmt.Errorf("--memory: %w", err)
	}
	return &machine{name: o.name, cores: int(cpu.Value()), memory: uint64(mem.Value())}, nil
}

func setOf(list []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range list {
		m[s] = true
	}
	return m
}
