package verify

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// These tests count what verify does per delivery for one pod whose
// upgrade has landed (the kubelet restarted its container onto the target
// and it is ready; no gate): a fake API server holds the pod, the guard
// confirms its state.

const (
	digestV1 = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	digestV2 = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
)

// confirming is a guard that confirms every state as the record's.
type confirming struct{}

func (confirming) State(_ context.Context, _ *corev1.Pod, st *inplace.State) (*inplace.State, error) {
	return st, nil
}

func (confirming) Ended(context.Context, events.Plan) (string, error) { return "", nil }

// landedPod is pod web, patched at t0 to v2 and restarted onto it, ready.
func landedPod(t *testing.T) (*corev1.Pod, events.Plan) {
	t.Helper()
	to := "reg.local/web:v2@" + digestV2
	st := inplace.State{UpgradeID: "up-1", Target: to, Phase: inplace.PhasePatched, PatchedAt: t0,
		Owner:         events.ObjectRef{Kind: "Deployment", Namespace: "ns", Name: "web"},
		VerifySeconds: 300,
		Containers: []inplace.ContainerState{{Name: "app", PreviousImage: "reg.local/web:v1",
			PreviousImageID: "reg.local/web@" + digestV1, PreviousContainerID: "containerd://a",
			TargetImage: to, TargetDigest: digestV2}}}
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1", UID: "uid-1", ResourceVersion: "10",
			Annotations: map[string]string{inplace.StateAnnotation: string(raw)}},
		Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "app", Image: to}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", Image: to, ImageID: "reg.local/web@" + digestV2, ContainerID: "containerd://b",
			RestartCount: 1, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0.Add(2e9))}}}}},
	}
	return pod, inplace.PlanFromState(pod, &st)
}

// landed is verify over a fake API server holding the landed pod.
func landed(t *testing.T) (*Function, *corev1.Pod, events.Plan) {
	t.Helper()
	pod, plan := landedPod(t)
	f := New(Deps{Client: fake.NewClientset(pod), Guard: confirming{}, Clock: clocktesting.NewFakePassiveClock(t0.Add(10e9))})
	return f, pod, plan
}

func event(t *testing.T, id, typ string, data any) cloudevents.Event {
	t.Helper()
	e, err := events.New(id, typ, events.Source("test"), "ns/web-1", data)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func podUpdated(t *testing.T, id string, pod *corev1.Pod) cloudevents.Event {
	return event(t, id, events.PodUpdated, events.PodUpdatedData{Pod: *pod})
}

func podPatched(t *testing.T, plan events.Plan, rv string) cloudevents.Event {
	return event(t, "patched-1", events.PodPatched, events.PatchedData{Plan: plan, ResourceVersion: rv, PatchedAt: t0})
}

// outcomes are the types of outs.
func outcomes(outs []cloudevents.Event) []string {
	var got []string
	for _, e := range outs {
		got = append(got, e.Type())
	}
	return got
}

// The pod watcher publishes container.restarted only beside the
// pod.updated of the same change, so verify neither takes it nor acts on
// one delivered to it: the pod.updated reports the landing, once.
func TestContainerRestartedIsNotAnInput(t *testing.T) {
	f, pod, plan := landed(t)
	for _, typ := range f.Types() {
		if typ == events.ContainerRestarted {
			t.Errorf("Types() = %v; want no %s", f.Types(), events.ContainerRestarted)
		}
	}
	restarted := event(t, "restarted-1", events.ContainerRestarted, events.ContainerRestartedData{Pod: plan.Pod,
		Container: "app", OldContainerID: "containerd://a", NewContainerID: "containerd://b", RestartCount: 1})
	if outs, err := f.Handle(t.Context(), restarted); len(outs) != 0 || err != nil {
		t.Errorf("container.restarted: %v, %v; want nothing", outcomes(outs), err)
	}
	outs, err := f.Handle(t.Context(), podUpdated(t, "updated-1", pod))
	if err != nil || len(outs) != 1 || outs[0].Type() != events.UpgradeSucceeded {
		t.Errorf("pod.updated: %v, %v; want one %s", outcomes(outs), err, events.UpgradeSucceeded)
	}
}

// The pod.updated that lands an upgrade reports it; the timer's next
// delivery (pod.patched, delivered again until a decision) re-derives the
// same end from the pod and the record. Once the runner has confirmed the
// outcome on the stream, that delivery, and any other, settles without
// it; unconfirmed (the publish failed), the timer reports it, under the
// same id.
func TestAnOutcomeOnTheStreamIsReportedOnce(t *testing.T) {
	tests := []struct {
		name      string
		confirmed bool
		want      int // outcomes the timer returns
	}{
		{"confirmed on the stream", true, 0},
		{"publish failed", false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, pod, plan := landed(t)
			updated := podUpdated(t, "updated-1", pod)
			first, err := f.Handle(t.Context(), updated)
			if err != nil || len(first) != 1 || first[0].Type() != events.UpgradeSucceeded {
				t.Fatalf("pod.updated: %v, %v; want one %s", outcomes(first), err, events.UpgradeSucceeded)
			}
			if tt.confirmed {
				f.Published(updated, first)
			}
			outs, err := f.Handle(t.Context(), podPatched(t, plan, pod.ResourceVersion))
			if err != nil || len(outs) != tt.want {
				t.Fatalf("timer: %v, %v; want %d outcomes, settled", outcomes(outs), err, tt.want)
			}
			if tt.want > 0 && outs[0].ID() != first[0].ID() {
				t.Errorf("timer's outcome id %s, want the pod.updated's %s", outs[0].ID(), first[0].ID())
			}
			// Confirmed, or carried by the timer's delivery now: a
			// pod.updated is a wake-up only.
			if again, err := f.Handle(t.Context(), updated); err != nil || len(again) != 0 {
				t.Errorf("pod.updated again: %v, %v; want no outcome", outcomes(again), err)
			}
		})
	}
}

// While one delivery's outcome is on its way to the stream (returned, not
// yet confirmed), a pod.updated that arrives at the same end settles
// without it; the returning delivery's own retry (its publish failed)
// still returns it.
func TestAnOutcomeOnItsWayIsReturnedOnce(t *testing.T) {
	f, pod, plan := landed(t)
	timer := podPatched(t, plan, pod.ResourceVersion)
	first, err := f.Handle(t.Context(), timer)
	if err != nil || len(first) != 1 || first[0].Type() != events.UpgradeSucceeded {
		t.Fatalf("timer: %v, %v; want one %s", outcomes(first), err, events.UpgradeSucceeded)
	}
	if outs, err := f.Handle(t.Context(), podUpdated(t, "updated-1", pod)); err != nil || len(outs) != 0 {
		t.Errorf("pod.updated while the timer's outcome is on its way: %v, %v; want none", outcomes(outs), err)
	}
	retry, err := f.Handle(t.Context(), timer)
	if err != nil || len(retry) != 1 || retry[0].ID() != first[0].ID() {
		t.Errorf("the timer's retry: %v, %v; want its outcome again, id %s", outcomes(retry), err, first[0].ID())
	}
}

// reads counts the pod reads of a kube.Reader.
type reads struct {
	kube.Reader
	n atomic.Int32
}

func (r *reads) Pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	r.n.Add(1)
	return r.Reader.Pod(ctx, ns, name)
}

// A burst of pod.updated for one pod is one decision: once a decision
// has read the pod and found nothing to do (the container is not ready
// yet), a pod.updated of that state or an older one is answered without
// another; a newer state is looked at, and decided.
func TestAPodsBurstOfUpdatesIsOneDecision(t *testing.T) {
	ready, _ := landedPod(t)
	pod := ready.DeepCopy()
	pod.Status.ContainerStatuses[0].Ready = false
	client := fake.NewClientset(pod)
	r := &reads{Reader: kube.Live{Client: client}}
	f := New(Deps{Client: client, Reader: r, Guard: confirming{}, Clock: clocktesting.NewFakePassiveClock(t0.Add(10e9))})

	for i, id := range []string{"updated-10", "updated-10-again", "updated-10-third"} {
		if outs, err := f.Handle(t.Context(), podUpdated(t, id, pod)); len(outs) != 0 || err != nil {
			t.Fatalf("%s: %v, %v; want nothing to do yet", id, outcomes(outs), err)
		}
		if got := r.n.Load(); got != 1 {
			t.Errorf("after %d deliveries of resourceVersion 10: %d reads of the pod; want 1", i+1, got)
		}
	}
	ready.ResourceVersion = "11"
	if _, err := client.CoreV1().Pods(ready.Namespace).Update(t.Context(), ready, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	outs, err := f.Handle(t.Context(), podUpdated(t, "updated-11", ready))
	if err != nil || len(outs) != 1 || outs[0].Type() != events.UpgradeSucceeded || r.n.Load() == 1 {
		t.Errorf("resourceVersion 11: %v, %v after %d reads; want one %s, the pod read again", outcomes(outs), err, r.n.Load(), events.UpgradeSucceeded)
	}
}
