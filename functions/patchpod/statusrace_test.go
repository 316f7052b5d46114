package patchpod_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/patchpod"
	"github.com/inplace-dev/inplace/functions/verify/fntest"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/world"
)

// TestAStatusWriteBetweenGateAndPatchRefusesNothing: a pod whose restarted
// container has a preStop hook is patched right after its gate goes False;
// the kubelet writes the pod's status (Ready False) in between. patch-pod
// then writes twice (the gate, the image) and is refused nothing: the
// image patch is not guarded by the resourceVersion that status write
// moved.
func TestAStatusWriteBetweenGateAndPatchRefusesNothing(t *testing.T) {
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	writes := &fntest.Writes{}
	after := &afterGate{w: w}
	rc := fntest.IdentityConfig(t, w, patchpod.RBAC, ns)
	rc.Wrap(func(next http.RoundTripper) http.RoundTripper { return writes.Wrap(after.wrap(next)) })
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	f := patchpod.New(patchpod.Deps{Client: client, Guard: fntest.Guard(client)})

	v1, v2 := fntest.Push(t, w, "patch/race", "v1"), fntest.Push(t, w, "patch/race", "v2")
	p := fntest.Pod(ns, "race", v1.Ref, true)
	p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 1}}}
	pod := fntest.RunPod(t, w, p)
	plan := fntest.Plan(t, pod, "up-race", v2)

	outs, err := f.Handle(t.Context(), prepulled(t, plan))
	if err != nil || len(outs) != 1 || outs[0].Type() != events.PodPatched {
		t.Fatalf("delivery = %d outputs, %v; want pod.patched", len(outs), err)
	}
	if n := after.writes.Load(); n != 1 {
		t.Fatalf("status writes between the gate and the patch = %d, want 1", n)
	}
	if diff := cmp.Diff(map[int]int{http.StatusOK: 2}, writes.Status()); diff != "" {
		t.Errorf("patch-pod's writes by answer (-want +got):\n%s", diff)
	}
	if img := fntest.Get(t, w, pod).Spec.Containers[0].Image; img != v2.Pinned {
		t.Errorf("image %s, want %s", img, v2.Pinned)
	}
}

// afterGate writes the pod's status as the kubelet does (Ready False, for
// the gate) once, right after patch-pod's first write of the status
// subresource has been answered and before patch-pod sees the answer.
type afterGate struct {
	w      *world.World
	writes atomic.Int32
}

func (a *afterGate) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusOK || req.Method != http.MethodPatch ||
			!strings.HasSuffix(req.URL.Path, "/status") || !a.writes.CompareAndSwap(0, 1) {
			return resp, err
		}
		parts := strings.Split(req.URL.Path, "/") // /api/v1/namespaces/<ns>/pods/<name>/status
		ns, name := parts[4], parts[6]
		body := fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","status":"False","reason":"ReadinessGatesNotReady","message":"the kubelet at %s"}]}}`,
			time.Now().Format(time.RFC3339Nano))
		if _, perr := a.w.Client().CoreV1().Pods(ns).Patch(req.Context(), name, types.StrategicMergePatchType, []byte(body),
			metav1.PatchOptions{}, "status"); perr != nil {
			a.writes.Add(1) // fails the count check
		}
		return resp, err
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestTheImagePatchGuardOnTheAPIServer: the image patch, built on the pod
// as read with its gate False, sent after a concurrent write: the real API
// server takes it after a write of the pod's status, labels or other
// annotations, and keeps that write; it refuses it after the container's
// image changed or the pod was recreated under the same name.
func TestTheImagePatchGuardOnTheAPIServer(t *testing.T) {
	tests := []struct {
		name    string
		change  func(t *testing.T, w *world.World, pod *corev1.Pod, third string)
		refused bool
	}{
		{"status only", func(t *testing.T, w *world.World, pod *corev1.Pod, _ string) {
			patchPod(t, w, pod, fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","status":"False","message":"at %s"}]}}`,
				time.Now().Format(time.RFC3339Nano)), "status")
		}, false},
		{"a label and an annotation", func(t *testing.T, w *world.World, pod *corev1.Pod, _ string) {
			patchPod(t, w, pod, `{"metadata":{"labels":{"tier":"front"},"annotations":{"note":"hi"}}}`)
		}, false},
		{"image changed", func(t *testing.T, w *world.World, pod *corev1.Pod, third string) {
			fntest.SetImage(t, w, pod, "app", third)
		}, true},
		{"recreated", func(t *testing.T, w *world.World, pod *corev1.Pod, _ string) {
			zero := int64(0)
			if err := w.Client().CoreV1().Pods(pod.Namespace).Delete(t.Context(), pod.Name,
				metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
				t.Fatal(err)
			}
			again := pod.DeepCopy()
			again.ObjectMeta = metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, Labels: pod.Labels, Annotations: pod.Annotations}
			again.Status = corev1.PodStatus{}
			fntest.Create(t, w, again)
		}, true},
	}
	w := world.Shared(t)
	v1, v2 := fntest.Push(t, w, "patch/guard", "v1"), fntest.Push(t, w, "patch/guard", "v2")
	third := fntest.Push(t, w, "patch/guard", "v3")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := w.NewNamespace(t)
			client := fntest.Identity(t, w, patchpod.RBAC, ns)
			pod := fntest.RunPod(t, w, fntest.Pod(ns, "web", v1.Ref, true))
			fntest.SetGate(t, w, pod, corev1.ConditionFalse)
			read := fntest.Get(t, w, pod)
			body, err := inplace.Patch(read, fntest.Plan(t, read, "up-guard", v2), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			tt.change(t, w, read, third.Ref)
			before := fntest.Get(t, w, pod)
			got, err := client.CoreV1().Pods(ns).Patch(t.Context(), pod.Name, types.JSONPatchType, body,
				metav1.PatchOptions{FieldManager: patchpod.FieldManager})
			if tt.refused {
				if !inplace.PreconditionFailed(err) {
					t.Errorf("patch: %v; want refused by a failed test", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("patch: %v", err)
			}
			want := before.Spec.DeepCopy()
			want.Containers[0].Image = v2.Pinned
			if diff := cmp.Diff(want, &got.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			wantAnn := map[string]string{inplace.StateAnnotation: got.Annotations[inplace.StateAnnotation]}
			for k, v := range before.Annotations {
				wantAnn[k] = v
			}
			if diff := cmp.Diff(wantAnn, got.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before.Labels, got.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

// patchPod writes a strategic-merge patch as someone else would.
func patchPod(t *testing.T, w *world.World, pod *corev1.Pod, body string, sub ...string) {
	t.Helper()
	if _, err := w.Client().CoreV1().Pods(pod.Namespace).Patch(t.Context(), pod.Name, types.StrategicMergePatchType,
		[]byte(body), metav1.PatchOptions{}, sub...); err != nil {
		t.Fatalf("patch pod %s: %v", pod.Name, err)
	}
}
