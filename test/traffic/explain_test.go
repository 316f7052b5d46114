package traffic

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// Explain puts the failures, the recorded changes and the klog lines of
// the window in time order, and leaves out what falls outside it.
func TestExplainOrdersTheWindow(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, "2026-11-28T"+s+"Z")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	log := filepath.Join(t.TempDir(), "kube-proxy.log")
	if err := os.WriteFile(log, []byte(strings.Join([]string{
		`I1128 00:55:00.100000    7674 proxier.go:763] "Syncing iptables rules" (outside)`,
		`I1128 00:55:06.400000    7674 proxier.go:757] "SyncProxyRules complete"`,
		`not a klog line`,
		`I1128 00:55:05.900000    7674 proxier.go:763] "Syncing iptables rules"`,
	}, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &Recorder{client: fake.NewClientset(), ns: "ns", sel: "app=web", last: map[string]string{}}
	r.lines = []line{{at: at("00:55:06.300"), text: "endpointslice web-1: web-a(ready=false)"},
		{at: at("00:54:00"), text: "outside"}}
	got := r.Explain(t.Context(), []Sample{{At: at("00:55:06.350"), Error: "connection refused"}},
		time.Second, time.Second, log)
	want := `
what happened from 00:55:05.350 to 00:55:07.350:
  00:55:05.900 kube-proxy.log: I1128 00:55:05.900000    7674 proxier.go:763] "Syncing iptables rules"
  00:55:06.300 endpointslice web-1: web-a(ready=false)
  00:55:06.350 probe: FAILED connection refused
  00:55:06.400 kube-proxy.log: I1128 00:55:06.400000    7674 proxier.go:757] "SyncProxyRules complete"
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Explain (-want +got):\n%s", diff)
	}
	if got := r.Explain(t.Context(), nil, time.Second, time.Second, log); got != "" {
		t.Errorf("Explain of no failure: %q, want nothing", got)
	}
}

// A pod's summary holds its Ready condition, its readiness gates and its
// containers; an EndpointSlice's each endpoint's pod and conditions.
func TestSummaries(t *testing.T) {
	yes, no := true, false
	p := &corev1.Pod{Status: corev1.PodStatus{
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse}, {Type: "inplace.dev/ready", Status: corev1.ConditionFalse}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "app", RestartCount: 1,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}}}}}
	if diff := cmp.Diff("Ready=False inplace.dev/ready=False app[terminated ready=false restarts=1]", podSummary(p)); diff != "" {
		t.Errorf("podSummary (-want +got):\n%s", diff)
	}
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "web-1"}, Endpoints: []discoveryv1.Endpoint{
		{Addresses: []string{"10.0.0.2"}, TargetRef: &corev1.ObjectReference{Name: "web-b"},
			Conditions: discoveryv1.EndpointConditions{Ready: &no, Serving: &yes, Terminating: &no}},
		{Addresses: []string{"10.0.0.1"}},
	}}
	if diff := cmp.Diff("10.0.0.1(ready=nil serving=nil terminating=nil) web-b(ready=false serving=true terminating=false)", sliceSummary(s)); diff != "" {
		t.Errorf("sliceSummary (-want +got):\n%s", diff)
	}
}

// Record notes the selected pods and the EndpointSlices under one key
// each, a deletion under the same key, and leaves other pods out.
func TestRecordNotesSelectedPods(t *testing.T) {
	web := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-a", Namespace: "ns", Labels: map[string]string{"app": "web"}}}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-a", Namespace: "ns", Labels: map[string]string{"app": "db"}}}
	c := fake.NewClientset(web, other)
	r, err := Record(t.Context(), c, "ns", "app=web")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CoreV1().Pods("ns").Delete(t.Context(), "web-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"pod web-a: ", "pod web-a: deleted"}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		r.mu.Lock()
		var got []string
		for _, l := range r.lines {
			got = append(got, l.text)
		}
		r.mu.Unlock()
		diff := cmp.Diff(want, got)
		if diff == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("recorded (-want +got):\n%s", diff)
		}
	}
	if _, err := Record(t.Context(), c, "ns", "app in (("); err == nil {
		t.Error("Record of a bad selector: no error")
	}
}
