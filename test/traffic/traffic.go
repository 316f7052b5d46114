package traffic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/test/images"
	"github.com/inplace-dev/inplace/test/images/settings"
	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/traffic/probe"
)

// Counts are the probe's counts (see test/traffic/probe).
type Counts = probe.Counts

// port is where the probe serves its counts.
const port = 8080

// Options configure Start.
type Options struct {
	// Image is the probe image's reference. When empty, Start builds it
	// and pushes it to Registry.
	Image    string
	Registry *registry.Registry
	// Name is the probe pod's name; default "traffic-probe".
	Name string
	// Rate is requests a second (default 50); Timeout bounds each (default 1s).
	Rate    float64
	Timeout time.Duration
	// NodeName pins the probe to a node; default the scheduler's choice.
	NodeName string
	// StartTimeout bounds the wait for the probe to run; default 2 minutes.
	StartTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = "traffic-probe"
	}
	if o.Rate == 0 {
		o.Rate = settings.DefaultProbe.Rate
	}
	if o.Timeout == 0 {
		o.Timeout = settings.DefaultProbe.Timeout
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 2 * time.Minute
	}
	return o
}

// Probe is a running traffic probe pod.
type Probe struct {
	client    kubernetes.Interface
	namespace string
	name      string
	timeout   time.Duration
}

// Start creates the probe pod in namespace sending requests to url and
// returns once it is Ready and its counts answer through the API server.
func Start(ctx context.Context, client kubernetes.Interface, namespace, url string, opts Options) (*Probe, error) {
	opts = opts.withDefaults()
	if opts.Rate < 0 || opts.Timeout < 0 {
		return nil, fmt.Errorf("start traffic probe: rate %g, timeout %s: want neither negative", opts.Rate, opts.Timeout)
	}
	image, err := probeImage(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("start traffic probe: %w", err)
	}
	pod := podFor(namespace, url, image, opts)
	if _, err := client.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("start traffic probe: %w", err)
	}
	p := &Probe{client: client, namespace: namespace, name: opts.Name, timeout: opts.Timeout}
	if err := p.awaitRunning(ctx, opts.StartTimeout); err != nil {
		return nil, fmt.Errorf("start traffic probe %s/%s: %w", namespace, opts.Name, err)
	}
	return p, nil
}

// probeImage is opts.Image, or the probe image pushed to opts.Registry
// under a tag naming its sources.
func probeImage(ctx context.Context, opts Options) (string, error) {
	if opts.Image != "" {
		return opts.Image, nil
	}
	if opts.Registry == nil {
		return "", errors.New("options: set Image or Registry")
	}
	img, err := images.Probe(ctx)
	if err != nil {
		return "", err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return "", fmt.Errorf("probe image: %w", err)
	}
	tag := "src-" + cf.Config.Labels[images.SourcesLabel][:16]
	if _, err := opts.Registry.PushImage(ctx, "inplace/probe", tag, img); err != nil {
		return "", err
	}
	return opts.Registry.Host() + "/inplace/probe:" + tag, nil
}

// podFor is the probe's pod: it never restarts (a restart would lose its
// counts) and is Ready once it serves /readyz.
func podFor(namespace, url, image string, o Options) *corev1.Pod {
	env := settings.Probe{URL: url, Rate: o.Rate, Timeout: o.Timeout, Listen: ":" + strconv.Itoa(port)}.Env()
	var envVars []corev1.EnvVar
	for _, e := range env {
		k, v, _ := cutEnv(e)
		envVars = append(envVars, corev1.EnvVar{Name: k, Value: v})
	}
	grace := int64(5)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: namespace, Labels: map[string]string{"app.kubernetes.io/name": "traffic-probe"}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, NodeName: o.NodeName, TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name: "probe", Image: image, ImagePullPolicy: corev1.PullIfNotPresent, Env: envVars,
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				Ports:                    []corev1.ContainerPort{{Name: "http", ContainerPort: port}},
				ReadinessProbe: &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{
					HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intOrString(port)}}},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("32Mi")}},
			}},
		},
	}
}

// awaitRunning waits until the pod is Ready and its counts answer; a pod
// that ended fails at once.
func (p *Probe) awaitRunning(ctx context.Context, timeout time.Duration) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		pod, err := p.client.CoreV1().Pods(p.namespace).Get(ctx, p.name, metav1.GetOptions{})
		if err != nil {
			last = err
			return false, nil
		}
		if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
			return false, fmt.Errorf("pod %s: %s", pod.Status.Phase, terminated(pod))
		}
		if !ready(pod) {
			last = fmt.Errorf("pod %s, not Ready", pod.Status.Phase)
			return false, nil
		}
		_, last = p.Counts(ctx)
		return last == nil, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("%w (last: %v)", err, last)
	}
	return err
}

// Counts reads the probe's counts since it started.
func (p *Probe) Counts(ctx context.Context) (Counts, error) {
	b, err := p.client.CoreV1().Pods(p.namespace).ProxyGet("http", p.name, strconv.Itoa(port), "counts", nil).DoRaw(ctx)
	if err != nil {
		return Counts{}, fmt.Errorf("traffic probe counts: %w", err)
	}
	return decode(b)
}

// Wait polls the counts every 100ms until cond holds or timeout passes
// and returns the last counts read.
func (p *Probe) Wait(ctx context.Context, timeout time.Duration, what string, cond func(Counts) bool) (Counts, error) {
	var c Counts
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		c, last = p.Counts(ctx)
		return last == nil && cond(c), nil
	})
	if err != nil {
		return c, fmt.Errorf("traffic probe: waiting for %s: %w (counts %+v, last error %v)", what, err, c, last)
	}
	return c, nil
}

// Steady returns the counts once the URL has answered for longer than a
// request may take: every request still in flight then was sent after the
// first answer. Counts taken before are the window's start (Counts.Sub):
// a Service's first moments, while kube-proxy on the probe's node has not
// yet programmed its endpoints, refuse or drop requests, and that is no
// failure of what the window measures.
func (p *Probe) Steady(ctx context.Context, timeout time.Duration) (Counts, error) {
	deadline := time.Now().Add(timeout)
	first, err := p.Wait(ctx, timeout, "a first answer", func(c Counts) bool { return c.OK > 0 })
	if err != nil {
		return first, err
	}
	return p.Wait(ctx, time.Until(deadline), "answers for "+(2*p.timeout).String(), func(c Counts) bool {
		return c.At.Sub(first.At) > 2*p.timeout
	})
}

// Stop stops the probe's requests, waits for those in flight, deletes the
// pod and returns the final counts.
func (p *Probe) Stop(ctx context.Context) (Counts, error) {
	b, err := p.client.CoreV1().RESTClient().Post().Namespace(p.namespace).Resource("pods").
		Name(p.name + ":" + strconv.Itoa(port)).SubResource("proxy").Suffix("stop").DoRaw(ctx)
	if err != nil {
		return Counts{}, fmt.Errorf("stop traffic probe: %w", err)
	}
	final, err := decode(b)
	if err != nil {
		return Counts{}, fmt.Errorf("stop traffic probe: %w", err)
	}
	err = p.client.CoreV1().Pods(p.namespace).Delete(ctx, p.name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return final, fmt.Errorf("stop traffic probe: %w", err)
	}
	return final, nil
}

func decode(b []byte) (Counts, error) {
	var c Counts
	if err := json.Unmarshal(b, &c); err != nil {
		return Counts{}, fmt.Errorf("traffic probe counts: %w", err)
	}
	return c, nil
}
