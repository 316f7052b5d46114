package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/test/proc"
	"github.com/inplace-dev/inplace/test/world"
)

// env is one run of a scenario: a namespace of the shared world with its
// config-inplace, its own NATS, the bus as the test sees it, and the
// `inplace run` child processes it starts.
type env struct {
	t    *testing.T
	w    *world.World
	ns   string
	dir  string
	nats *bustest.Servers
	cfg  bus.Config
	nc   *nats.Conn
	b    *bus.Bus
	rng  *rand.Rand
	// kubeconfig is the children's (the proxy's, in the proxy scenario).
	kubeconfig string
	child      *proc.Process
	children   int
	// replicas run beside child (the replicas scenario).
	replicas []*proc.Process
	// wl is the Deployment rolled out.
	wl events.ObjectRef
	// killedAt is where each kill landed (the kill scenario).
	killedAt []string
}

// busConfig is the bus of the children and of the test: short timings.
func busConfig(replicas int) bus.Config {
	c := bus.DefaultConfig()
	c.Replicas = replicas
	c.AckWait = 3 * time.Second
	c.Backoff = []time.Duration{200 * time.Millisecond, 500 * time.Millisecond, time.Second}
	return c
}

func newEnv(t *testing.T, natsNodes int) *env {
	t.Helper()
	w := world.Shared(t)
	e := &env{t: t, w: w, ns: w.NewNamespace(t), dir: t.TempDir(), cfg: busConfig(natsNodes),
		rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7)), kubeconfig: w.Cluster.Kubeconfig()}
	e.wl = events.ObjectRef{Kind: "Deployment", Namespace: e.ns, Name: "web"}
	e.configMap()
	e.nats = bustest.Cluster(t, natsNodes)
	e.connect()
	t.Cleanup(e.stopChild)
	return e
}

// configMap is config-inplace with deadlines short enough for a test.
func (e *env) configMap() {
	e.t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: config.ConfigMapName, Namespace: e.ns},
		Data: map[string]string{
			"prepull-namespace": e.ns, "prepull-timeout": "20s", "verify-seconds": "30",
			"watchdog-slack": "2s", "watchdog-remind-every": "3s", "watchdog-reminders": "3", "stall-deadline": "2m",
		}}
	if _, err := e.w.Client().CoreV1().ConfigMaps(e.ns).Create(e.t.Context(), cm, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// connect opens the test's own view of the bus and makes every consumer
// before anything is published, as `inplace run` does.
func (e *env) connect() {
	e.t.Helper()
	var err error
	if e.nc, err = nats.Connect(e.nats.URL(), nats.Name("faults"), nats.MaxReconnects(-1), nats.ReconnectWait(200*time.Millisecond)); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(e.nc.Close)
	var last error
	err = world.Eventually(e.t.Context(), time.Minute, "the stream set up", func(ctx context.Context) (bool, error) {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second) // a cluster may still be electing its leaders
		defer cancel()
		b, err := bus.Connect(ctx, e.nc, e.cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			last = err
			return false, nil // a cluster still electing its meta leader
		}
		e.b = b
		last = b.EnsureConsumers(ctx, app.Consumers...)
		return last == nil, nil
	})
	if err != nil {
		e.t.Fatalf("%v: %v", err, last)
	}
}

// childArgs is `inplace run` for this env: the functions of the chain
// (the push is published by the test), its NATS, deadlines short.
func (e *env) childArgs() []string {
	return []string{"run", "--nats-url", e.nats.URL(), "--kubeconfig", e.kubeconfig, "--namespace", e.ns,
		"--http-addr", "127.0.0.1:0", "--functions", "compute-spec,pre-pull,patch-pod,verify", "--workers", "4",
		"--replicas", strconv.Itoa(e.cfg.Replicas), "--ack-wait", e.cfg.AckWait.String(),
		"--retry-backoff", "200ms,500ms,1s", "--watchdog-period", "1s", "--log-level", "info"}
}

// startChild starts a separate `inplace run` process (this test binary,
// running the inplace command).
func (e *env) startChild() {
	e.t.Helper()
	e.children++
	p, err := proc.Start(e.dir, fmt.Sprintf("inplace-%02d", e.children), os.Args[0], e.childArgs(), childEnv+"=1")
	if err != nil {
		e.t.Fatal(err)
	}
	e.child = p
}

// kill SIGKILLs the child, as a crash would.
func (e *env) kill() {
	e.child.Kill()
	e.child = nil
}

func (e *env) stopChild() {
	if e.child != nil {
		e.child.Stop(10 * time.Second)
		e.child = nil
	}
}

// logs are the children's log tails, for a failure message.
func (e *env) logs() string {
	var ps []*proc.Process
	if e.child != nil {
		ps = append(ps, e.child)
	}
	ps = append(ps, e.replicas...)
	return proc.Tails(40, ps...)
}

// image pushes tag of the env's repository to the registry and returns its
// reference and digest.
func (e *env) image(tag string) (string, string) {
	e.t.Helper()
	d, err := e.w.Registry.Push(e.t.Context(), e.ns+"/web", tag)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.w.Registry.Host() + "/" + e.ns + "/web:" + tag, d
}

// deploy creates the Deployment (gated, opted in) and waits until its pods
// are Ready; a child must run (its pod watcher opens the gates).
func (e *env) deploy(replicas int32, annotations map[string]string) {
	e.t.Helper()
	img, _ := e.image("1.0.0")
	labels := map[string]string{"app": "web"}
	ann := map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "2"}
	for k, v := range annotations {
		ann[k] = v
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: e.ns, Annotations: ann},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers:     []corev1.Container{{Name: "app", Image: img}},
				ReadinessGates: []corev1.PodReadinessGate{{ConditionType: inplace.ReadinessGate}}}}},
	}
	if _, err := e.w.Client().AppsV1().Deployments(e.ns).Create(e.t.Context(), d, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := world.WaitPods(e.t.Context(), e.w.Client(), e.ns, "app=web", 2*time.Minute, "all Ready",
		world.AllReady(int(replicas))); err != nil {
		e.t.Fatalf("%v%s", err, e.logs())
	}
}

// push publishes image.pushed for tag, as the receiver would, and returns
// the rollout it starts.
func (e *env) push(tag string) pushed {
	e.t.Helper()
	ref, digest := e.image(tag)
	d := events.ImagePushedData{Registry: e.w.Registry.Host(), Repository: e.ns + "/web", Tag: tag, Digest: digest, Origin: "test"}
	ev, err := events.New(events.PushID(d), events.ImagePushed, events.Source("receiver"), d.Ref(), d)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.b.Publish(e.t.Context(), ev); err != nil {
		e.t.Fatal(err)
	}
	return pushed{upgradeID: events.DeriveUpgradeID(ev.ID(), e.wl), image: ref + "@" + digest, digest: digest}
}

// pushed is one rollout the test started.
type pushed struct {
	upgradeID, image, digest string
}

// state reads the Deployment's rollout from the KV bucket (nil if none or
// unreadable right now: a NATS node may be down).
func (e *env) state(ctx context.Context) *rollout.Rollout {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second) // a request may hang while a cluster elects
	defer cancel()
	kv, err := e.b.JetStream().KeyValue(ctx, e.cfg.KVBucket)
	if err != nil {
		return nil
	}
	entry, err := kv.Get(ctx, rollout.Key(e.wl))
	if err != nil {
		return nil
	}
	var r rollout.Rollout
	if json.Unmarshal(entry.Value(), &r) != nil {
		return nil
	}
	return &r
}

// waitPhase waits until the rollout of p is in one of phases.
func (e *env) waitPhase(p pushed, within time.Duration, cond func(*rollout.Rollout) bool, what string) {
	e.t.Helper()
	err := world.Eventually(e.t.Context(), within, what, func(ctx context.Context) (bool, error) {
		r := e.state(ctx)
		return r != nil && r.UpgradeID == p.upgradeID && cond(r), nil
	})
	if err != nil {
		e.t.Fatalf("%v; rollout: %s%s", err, e.describe(), e.logs())
	}
}

// describe summarises the rollout record for a failure message.
func (e *env) describe() string {
	r := e.state(e.t.Context())
	if r == nil {
		return "none"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %s %q %q", r.UpgradeID, r.Phase, r.Reason, r.Message)
	for name, p := range r.Pods {
		fmt.Fprintf(&sb, "; %s %s %s", name, p.State, p.Reason)
	}
	return sb.String()
}

// done waits until the rollout completed (or ended otherwise).
func (e *env) done(p pushed, within time.Duration) {
	e.t.Helper()
	e.waitPhase(p, within, func(r *rollout.Rollout) bool { return r.Phase == rollout.Completed || r.Phase == rollout.Halted },
		"rollout "+p.upgradeID+" ended")
	if r := e.state(e.t.Context()); r != nil && r.Phase != rollout.Completed {
		e.t.Errorf("rollout %s: %s%s", p.upgradeID, e.describe(), e.logs())
	}
}

// podInfo is what a pod must keep, and what must move.
type podInfo struct {
	UID          string
	RestartCount int32
}

// pods records the Deployment's pods now.
func (e *env) pods() map[string]podInfo {
	e.t.Helper()
	list, err := e.w.Client().CoreV1().Pods(e.ns).List(e.t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]podInfo{}
	for _, p := range list.Items {
		info := podInfo{UID: string(p.UID)}
		if cs := world.ContainerStatus(&p, "app"); cs != nil {
			info.RestartCount = cs.RestartCount
		}
		out[p.Name] = info
	}
	return out
}

func client(e *env) kubernetes.Interface { return e.w.Client() }
