package prom_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/inplace-dev/inplace/pkg/core/analysis"
	"github.com/inplace-dev/inplace/pkg/inputs/prometheus"
	"github.com/inplace-dev/inplace/test/images/settings"
	"github.com/inplace-dev/inplace/test/kubelet"
	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/world"
)

// errorRatio is the share of 5xx answers of the pods measured; "or
// vector(0)" makes a pod that never failed a 0, not no data.
const errorRatio = `(sum(rate(http_requests_total{namespace="{{.Namespace}}",pod=~"{{.Pods}}",code=~"5.."}[5s])) or vector(0))
  / sum(rate(http_requests_total{namespace="{{.Namespace}}",pod=~"{{.Pods}}"}[5s]))`

// TestPrometheusSeesTheErrorShareOnRealNodes: a world on a real node with
// Prometheus discovering its pods; two app pods, 1.0.0 and 1.1.0 whose
// image answers 10% of requests with 500 while /readyz stays 200, under
// traffic from the test. Prometheus scrapes both (up == 1); the error
// ratio of the canary (1.1.0) measured through the adapter is 0.1 against
// 0 for the baseline, which the analysis judges a failure naming the
// query and the value; the other way round it is a success.
func TestPrometheusSeesTheErrorShareOnRealNodes(t *testing.T) {
	world.RequireReal(t)
	ctx := t.Context()
	w, err := world.Start(ctx, world.Options{Nodes: world.NodesReal, KubeletOptions: kubelet.Options{Nodes: 1}, Prometheus: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Stop() })
	ns := w.NewNamespace(t)
	good := startApp(t, w, ns, "web-good", "1.0.0")
	bad := startApp(t, w, ns, "web-bad", "1.1.0", registry.WithEnv(settings.AppPrefix+settings.ErrorRateVar+"=0.1"))
	var sent, failedGood atomic.Int64
	go traffic(ctx, good.Status.PodIP, &sent, &failedGood)
	go traffic(ctx, bad.Status.PodIP, &sent, nil)

	c, err := prometheus.New(prometheus.Config{URL: w.Prometheus.URL(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	q := analysis.Query{Name: "error-ratio", Query: errorRatio, Comparison: "<", Threshold: 0.05, Baseline: true}
	target := analysis.Target{Namespace: ns, Workload: "web", Kind: "Deployment",
		Canary: []string{bad.Name}, Baseline: []string{good.Name}, Version: "1.1.0", PreviousVersion: "1.0.0"}
	var m analysis.Measurement
	err = world.Eventually(ctx, 90*time.Second, "the canary's error ratio near 0.1, the baseline's 0", func(ctx context.Context) (bool, error) {
		up, err := c.Query(ctx, fmt.Sprintf(`count(up{job="pods",namespace=%q} == 1)`, ns), time.Now())
		if err != nil || up == nil || *up != 2 {
			return false, fmt.Errorf("pods scraped: %v, %v", up, err)
		}
		m = c.Measure(ctx, q, nil, target, time.Now())
		if m.Error != "" || m.Value == nil || m.Baseline == nil {
			return false, fmt.Errorf("measurement %+v", m)
		}
		return math.Abs(*m.Value-0.1) < 0.03 && *m.Baseline == 0, nil
	})
	if err != nil {
		t.Fatalf("%v%s", err, w.Prometheus.Logs())
	}
	t.Logf("canary %g, baseline %g after %d requests", *m.Value, *m.Baseline, sent.Load())
	step := analysis.Step{Canary: ptr(intstr.FromInt32(1)), Analysis: &analysis.Analysis{Queries: []analysis.Query{q}}}
	v := analysis.Evaluate(step, m.At.Add(-time.Second), []analysis.Measurement{m}, m.At.Add(time.Second))
	if v.Phase != analysis.Failed {
		t.Errorf("verdict on 1.1.0: %s (%s), want %s", v.Phase, v.Reason, analysis.Failed)
	}
	t.Logf("verdict on 1.1.0: %s: %s", v.Phase, v.Reason)

	target.Canary, target.Baseline = target.Baseline, target.Canary
	back := c.Measure(ctx, q, nil, target, time.Now())
	if out, val := analysis.Judge(q, back); out != analysis.Success {
		t.Errorf("1.0.0 against 1.1.0: %s (%g, %+v), want %s", out, val, back, analysis.Success)
	}
	if n := failedGood.Load(); n != 0 {
		t.Errorf("1.0.0 failed %d requests, want 0", n)
	}
}

// startApp runs one app pod of version tag (pushed with opts), annotated
// for Prometheus, and waits until it is Ready.
func startApp(t *testing.T, w *world.World, ns, name, tag string, opts ...registry.PushOption) *corev1.Pod {
	t.Helper()
	ctx := t.Context()
	repo := "shop/web"
	if _, err := w.Registry.Push(ctx, repo, tag, opts...); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "8080"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: w.Registry.Host() + "/" + repo + ":" + tag,
			ReadinessProbe: &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{
				HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8080)}}},
		}}},
	}
	if _, err := w.Client().CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := world.WaitPod(ctx, w.Client(), ns, name, 2*time.Minute, "Ready", world.PodReady)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// traffic sends requests to the app at ip until ctx ends, about 100 a
// second, counting them and, when failed is not nil, the failed ones.
func traffic(ctx context.Context, ip string, sent, failed *atomic.Int64) {
	hc := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+ip+":8080/", nil)
		if err != nil {
			return
		}
		resp, err := hc.Do(req)
		sent.Add(1)
		if err == nil {
			resp.Body.Close()
		}
		if failed != nil && ctx.Err() == nil && (err != nil || resp.StatusCode >= 500) {
			failed.Add(1)
		}
	}
}

func ptr[T any](v T) *T { return &v }
