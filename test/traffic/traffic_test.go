package traffic

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/test/images/settings"
)

// TestPodFor: the probe pod carries the URL, rate and timeout in the env
// the probe program parses, never restarts, and is Ready on /readyz.
func TestPodFor(t *testing.T) {
	o := Options{Rate: 20, Timeout: 300 * time.Millisecond}.withDefaults()
	pod := podFor("ns", "http://web.ns.svc.cluster.local:8080/", "reg/inplace/probe:x", o)
	c := pod.Spec.Containers[0]
	lookup := func(k string) (string, bool) {
		for _, e := range c.Env {
			if e.Name == k {
				return e.Value, true
			}
		}
		return "", false
	}
	got, err := settings.ParseProbe(lookup, settings.Probe{})
	if err != nil {
		t.Fatal(err)
	}
	want := settings.Probe{URL: "http://web.ns.svc.cluster.local:8080/", Rate: 20, Timeout: 300 * time.Millisecond, Listen: ":8080"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("probe settings (-want +got):\n%s", diff)
	}
	if pod.Name != "traffic-probe" || pod.Spec.RestartPolicy != corev1.RestartPolicyNever ||
		c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.ReadinessProbe.HTTPGet.Port.IntValue() != port {
		t.Errorf("pod %s restart %s readiness %+v: want traffic-probe, Never, /readyz on %d", pod.Name, pod.Spec.RestartPolicy, c.ReadinessProbe.HTTPGet, port)
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := Options{}.withDefaults()
	if o.Rate != 50 || o.Timeout != time.Second || o.Name != "traffic-probe" {
		t.Errorf("defaults %+v, want 50/s, 1s, traffic-probe", o)
	}
	if _, err := probeImage(t.Context(), Options{}); err == nil || !strings.Contains(err.Error(), "Image or Registry") {
		t.Errorf("probeImage without Image or Registry = %v, want an error naming both", err)
	}
}
