package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/bustest"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/test/images/settings"
	"github.com/inplace-dev/inplace/test/kubelet"
	"github.com/inplace-dev/inplace/test/proc"
	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/traffic"
	"github.com/inplace-dev/inplace/test/world"
)

// env is one test: a real-node world with Prometheus, a namespace with its
// config-inplace, its own NATS, and the `inplace run` processes it starts.
type env struct {
	t   *testing.T
	w   *world.World
	ns  string
	dir string
	// promURL is what `inplace run` is given as --prometheus-url.
	promURL  string
	nats     *bustest.Servers
	cfg      bus.Config
	b        *bus.Bus
	child    *proc.Process
	children int
	wl       events.ObjectRef
	// rec records the pods and EndpointSlices behind the Service while
	// the probe runs, to explain a failed request.
	rec *traffic.Recorder
	// opened is the Service probe's counts when it answered steadily: the
	// window noFailures checks starts there.
	opened traffic.Counts
}

// newEnv starts the world; promURL (when not empty) replaces the world's
// Prometheus as the one `inplace run` asks.
func newEnv(t *testing.T, promURL string) *env {
	t.Helper()
	world.RequireReal(t)
	w, err := world.Start(t.Context(), world.Options{Nodes: world.NodesReal,
		KubeletOptions: kubelet.Options{Nodes: 1}, Prometheus: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Stop() })
	if promURL == "" {
		promURL = w.Prometheus.URL()
	}
	e := &env{t: t, w: w, ns: w.NewNamespace(t), dir: t.TempDir(), promURL: promURL, cfg: bus.DefaultConfig()}
	e.cfg.AckWait = 3 * time.Second
	e.cfg.Backoff = []time.Duration{200 * time.Millisecond, 500 * time.Millisecond, time.Second}
	e.wl = events.ObjectRef{Kind: "Deployment", Namespace: e.ns, Name: "web"}
	e.configMap()
	e.nats = bustest.Cluster(t, 1)
	e.connect()
	t.Cleanup(e.stopChild)
	return e
}

// configMap is config-inplace with deadlines short enough for a test.
func (e *env) configMap() {
	e.t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: config.ConfigMapName, Namespace: e.ns},
		Data: map[string]string{
			"prepull-namespace": e.ns, "prepull-timeout": "30s", "verify-seconds": "60",
			"watchdog-slack": "2s", "watchdog-remind-every": "3s", "watchdog-reminders": "3", "stall-deadline": "3m",
		}}
	if _, err := e.w.Client().CoreV1().ConfigMaps(e.ns).Create(e.t.Context(), cm, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// connect opens the test's view of the bus and makes every consumer before
// anything is published, as `inplace run` does.
func (e *env) connect() {
	e.t.Helper()
	nc, err := nats.Connect(e.nats.URL(), nats.Name("analysis-test"))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(nc.Close)
	if e.b, err = bus.Connect(e.t.Context(), nc, e.cfg, slog.New(slog.DiscardHandler)); err != nil {
		e.t.Fatal(err)
	}
	if err := e.b.EnsureConsumers(e.t.Context(), app.Consumers...); err != nil {
		e.t.Fatal(err)
	}
}

// startChild starts `inplace run` (this test binary, running the inplace
// command) with the chain's functions, pointed at promURL.
func (e *env) startChild() {
	e.t.Helper()
	e.children++
	args := []string{"run", "--nats-url", e.nats.URL(), "--kubeconfig", e.w.Cluster.Kubeconfig(), "--namespace", e.ns,
		"--http-addr", "127.0.0.1:0", "--functions", "compute-spec,pre-pull,patch-pod,verify", "--workers", "4",
		"--ack-wait", e.cfg.AckWait.String(), "--retry-backoff", "200ms,500ms,1s", "--watchdog-period", "1s",
		"--log-level", "info", "--prometheus-url", e.promURL}
	p, err := proc.Start(e.dir, fmt.Sprintf("inplace-%02d", e.children), os.Args[0], args, childEnv+"=1")
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

func (e *env) logs() string {
	if e.child == nil {
		return ""
	}
	return proc.Tails(60, e.child)
}

// errorRatio is the share of 5xx answers of the pods measured; "or
// vector(0)" makes pods that never failed a 0, not no data.
const errorRatio = `(sum(rate(http_requests_total{namespace="{{.Namespace}}",pod=~"{{.Pods}}",code=~"5.."}[10s])) or vector(0))
  / sum(rate(http_requests_total{namespace="{{.Namespace}}",pod=~"{{.Pods}}"}[10s]))`

// canarySpec is one canary pod, baked for bake, then the error ratio
// measured twice 5 s apart against 5%; the remaining pods follow.
func canarySpec(bake string) string {
	q, _ := json.Marshal(errorRatio)
	return fmt.Sprintf(`{"steps":[{"canary":1,"bake":%q,"analysis":{"interval":"5s","count":2,
  "queries":[{"name":"error-ratio","query":%s,"comparison":"<","threshold":0.05}]}}]}`, bake, q)
}

// stopDelay is how long the app serves past SIGTERM: long enough for
// kube-proxy to take the pod out of the Service. patch-pod patches a
// pod as soon as its EndpointSlice shows it out (SIGTERM 0.1-0.9 s
// after), and kube-proxy, which syncs its rules at most once a second,
// often programs that removal about a second after the slice, the sync
// before it having just added the previous pod back: a margin of
// about a second with 2 s, which a stall of the machine used up once
// in CI (6 requests refused, 2 timed out).
const stopDelay = "3s"

// deploy creates the Deployment web of 1.0.0 (replicas, the readiness
// gate, max-unavailable 1, the analysis spec), its pods scraped by
// Prometheus and serving 3 s past SIGTERM (stopDelay, below), a Service in front, and waits
// until every pod is Ready. A child must run: its pod watcher opens the gates.
func (e *env) deploy(replicas int32, spec string) {
	e.t.Helper()
	img, _ := e.image("1.0.0")
	labels := map[string]string{"app": "web"}
	probe := &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{
		HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8080)}}}
	c := corev1.Container{Name: "app", Image: img, ReadinessProbe: probe,
		Env: []corev1.EnvVar{{Name: settings.AppPrefix + settings.StopDelayVar, Value: stopDelay}}}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: e.ns, Annotations: map[string]string{
			"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "1", "inplace.dev/analysis": spec}},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{
					"prometheus.io/scrape": "true", "prometheus.io/port": "8080"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{c},
					ReadinessGates: []corev1.PodReadinessGate{{ConditionType: inplace.ReadinessGate}}}}},
	}
	ctx := e.t.Context()
	if _, err := e.w.Client().AppsV1().Deployments(e.ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: e.ns},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 8080, TargetPort: intstr.FromInt32(8080)}}}}
	if _, err := e.w.Client().CoreV1().Services(e.ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := world.WaitPods(ctx, e.w.Client(), e.ns, "app=web", 2*time.Minute, "all Ready",
		world.AllReady(int(replicas))); err != nil {
		e.t.Fatalf("%v%s", err, e.logs())
	}
}

// image pushes tag of web (with opts) and returns its reference and digest.
func (e *env) image(tag string, opts ...registry.PushOption) (string, string) {
	e.t.Helper()
	d, err := e.w.Registry.Push(e.t.Context(), e.ns+"/web", tag, opts...)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.w.Registry.Host() + "/" + e.ns + "/web:" + tag, d
}

// pushed is one rollout the test started.
type pushed struct{ upgradeID, image, digest string }

// push pushes tag and publishes image.pushed, as the receiver would.
func (e *env) push(tag string, opts ...registry.PushOption) pushed {
	e.t.Helper()
	ref, digest := e.image(tag, opts...)
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

// state reads web's rollout record (nil if none).
func (e *env) state(ctx context.Context) *rollout.Rollout {
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

// waitRecord waits until p's record meets cond.
func (e *env) waitRecord(p pushed, within time.Duration, what string, cond func(*rollout.Rollout) bool) *rollout.Rollout {
	e.t.Helper()
	var got *rollout.Rollout
	err := world.Eventually(e.t.Context(), within, what, func(ctx context.Context) (bool, error) {
		got = e.state(ctx)
		return got != nil && got.UpgradeID == p.upgradeID && cond(got), nil
	})
	if err != nil {
		e.t.Fatalf("%v; record: %s\nanalysis events:\n%s%s", err, describe(got), e.analysisEvents(p), e.logs())
	}
	return got
}

// waitEvent waits for an event of typ of p's upgrade.
func (e *env) waitEvent(p pushed, typ string, within time.Duration) cloudevents.Event {
	e.t.Helper()
	var found cloudevents.Event
	err := world.Eventually(e.t.Context(), within, events.Short(typ)+" of "+p.upgradeID, func(context.Context) (bool, error) {
		for _, ev := range e.stream(typ) {
			if events.Ext(ev, events.ExtUpgradeID) == p.upgradeID {
				found = ev
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		e.t.Fatalf("%v; record: %s\nanalysis events:\n%s%s", err, describe(e.state(e.t.Context())), e.analysisEvents(p), e.logs())
	}
	return found
}

// stream is every event of types on the stream so far, in order.
func (e *env) stream(types ...string) []cloudevents.Event {
	e.t.Helper()
	cfg := jetstream.ConsumerConfig{AckPolicy: jetstream.AckNonePolicy, InactiveThreshold: 10 * time.Second}
	for _, t := range types {
		cfg.FilterSubjects = append(cfg.FilterSubjects, e.b.Config().Subject(t))
	}
	ctx := e.t.Context()
	c, err := e.b.JetStream().CreateConsumer(ctx, e.b.Config().Stream, cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	defer func() { _ = e.b.JetStream().DeleteConsumer(ctx, e.b.Config().Stream, c.CachedInfo().Name) }()
	var out []cloudevents.Event
	for {
		batch, err := c.FetchNoWait(500)
		if err != nil {
			e.t.Fatal(err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			ev, err := bus.Decode(ctx, m.Subject(), m.Headers(), m.Data())
			if err != nil {
				e.t.Fatal(err)
			}
			out = append(out, ev)
		}
		if n == 0 {
			return out
		}
	}
}

// analysisEvents are p's analysis and rollout events, one a line.
func (e *env) analysisEvents(p pushed) string {
	var sb strings.Builder
	for _, ev := range e.stream(events.RolloutAnalysisMeasured, events.RolloutAnalysisPassed, events.RolloutAnalysisFailed,
		events.RolloutHalted, events.RolloutCompleted) {
		if events.Ext(ev, events.ExtUpgradeID) == p.upgradeID {
			fmt.Fprintf(&sb, "  %s %s\n", events.Short(ev.Type()), ev.Data())
		}
	}
	return sb.String()
}

// describe summarises a record for a failure message.
func describe(r *rollout.Rollout) string {
	if r == nil {
		return "none"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %s %q %q", r.UpgradeID, r.Phase, r.Reason, r.Message)
	for name, p := range r.Pods {
		fmt.Fprintf(&sb, "; %s %s %s", name, p.State, p.Reason)
	}
	if a := r.Analysis; a != nil {
		b, _ := json.Marshal(a)
		fmt.Fprintf(&sb, "; analysis %s", b)
	}
	return sb.String()
}

// podInfo is what a pod keeps when it is left alone.
type podInfo struct {
	UID, IP, Image, ImageID string
	RestartCount            int32
	Ready                   bool
}

// pods are web's pods now.
func (e *env) pods() map[string]podInfo {
	e.t.Helper()
	list, err := e.w.Client().CoreV1().Pods(e.ns).List(e.t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]podInfo{}
	for i := range list.Items {
		p := &list.Items[i]
		info := podInfo{UID: string(p.UID), IP: p.Status.PodIP, Image: p.Spec.Containers[0].Image, Ready: world.PodReady(p)}
		if cs := world.ContainerStatus(p, "app"); cs != nil {
			info.ImageID, info.RestartCount = cs.ImageID, cs.RestartCount
		}
		out[p.Name] = info
	}
	return out
}

// waitPods waits until web's pods meet cond.
func (e *env) waitPods(within time.Duration, what string, cond func(map[string]podInfo) bool) {
	e.t.Helper()
	var last map[string]podInfo
	err := world.Eventually(e.t.Context(), within, what, func(context.Context) (bool, error) {
		last = e.pods()
		return cond(last), nil
	})
	if err != nil {
		e.t.Fatalf("%v; pods %+v; record: %s%s", err, last, describe(e.state(e.t.Context())), e.logs())
	}
}
