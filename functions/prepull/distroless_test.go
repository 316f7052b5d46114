package prepull_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/test/world"
)

// The test world's images hold one static program and nothing else (no
// shell, no /bin/true), as a distroless or scratch image does; on real
// nodes they are real images run by containerd and runc. Such an image is
// pre-pulled and the pull reported done, the pre-pull pod's container
// starts (the kubelet's Started Event), and the kubelet records no Warning
// Event about it (a container whose command the image lacks fails to
// start: "Failed", exec: no such file or directory).
func TestPrepullOfAnImageWithNoShell(t *testing.T) {
	w, appNS, pullNS, f := setup(t, nil)
	v1 := fntest.Push(t, w, "prepull/noshell", "v1")
	v2 := fntest.Push(t, w, "prepull/noshell", "v2")
	pod := fntest.RunPod(t, w, fntest.Pod(appNS, "app", v1.Ref, false))
	plan := fntest.Plan(t, pod, "up-noshell", v2)

	r := fntest.Drive(t, f.Handle, planned(t, plan))
	if got := fntest.Data[events.PrepulledData](t, fntest.One(t, r, events.ImagePrepulled)); got.Skipped != "" || got.PullMillis <= 0 {
		t.Errorf("prepulled: skipped %q, %d ms; want a pull", got.Skipped, got.PullMillis)
	}
	// The kubelet records the start's outcome (Started or Failed) before
	// the status that ended the pull shows the container: wait for it.
	var evs []corev1.Event
	world.Until(t, fntest.Timeout, "the kubelet's Started or Failed Event of the pre-pull container", func() bool {
		l, err := w.Client().CoreV1().Events(pullNS).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		evs = l.Items
		return slices.ContainsFunc(evs, func(e corev1.Event) bool { return e.Reason == "Started" || e.Reason == "Failed" })
	})
	started := false
	for _, e := range evs {
		started = started || e.Reason == "Started"
		if e.Type != corev1.EventTypeNormal {
			t.Errorf("Event %s %s about %s %s: %s", e.Type, e.Reason, e.InvolvedObject.Name, e.InvolvedObject.FieldPath, e.Message)
		}
	}
	if !started {
		t.Error("no Started Event: the pre-pull container did not start")
	}
}
