package kubelet

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func sidecarSpec(name, image string) corev1.Container {
	c := ctrSpec(name, image)
	c.RestartPolicy = ptr(corev1.ContainerRestartPolicyAlways)
	return c
}

func TestInitAndSidecar(t *testing.T) {
	pod := testPod(ctrSpec("app", imgV1))
	pod.Spec.InitContainers = []corev1.Container{ctrSpec("setup", imgV1), sidecarSpec("proxy", imgV1)}
	s := newSim(t, registry(), pod)
	st := s.until("initializing", time.Second, func(st corev1.PodStatus) bool { return true })
	if got := waitingOf(st, "app"); got != "PodInitializing" || st.Phase != corev1.PodPending {
		t.Errorf("app waiting %q phase %s, want PodInitializing, Pending", got, st.Phase)
	}
	st = s.until("ready", 2*time.Second, ready)
	setup := statusOfName(st, "setup")
	if setup.State.Terminated == nil || setup.State.Terminated.Reason != "Completed" || !setup.Ready {
		t.Errorf("init container %+v, want terminated Completed and ready", setup)
	}
	if c := findCondition(st.Conditions, corev1.PodInitialized); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("Initialized = %+v, want True", c)
	}

	s.setImage("setup", imgV2)
	st = s.until("acted on generation 2", time.Second, func(st corev1.PodStatus) bool { return st.ObservedGeneration == 2 })
	if got := statusOfName(st, "setup"); got.Image != imgV1 || got.RestartCount != 0 || got.State.Terminated == nil {
		t.Errorf("completed init container re-run on image change: %+v", got)
	}

	proxy := statusOfName(st, "proxy")
	s.setImage("proxy", imgV2)
	st = s.until("sidecar restarted", 2*time.Second, func(st corev1.PodStatus) bool {
		return statusOfName(st, "proxy").ImageID == "reg.test/app@"+dig2 && ready(st)
	})
	if got := statusOfName(st, "proxy"); got.RestartCount != 1 || got.LastTerminationState.Terminated == nil ||
		got.LastTerminationState.Terminated.ContainerID != proxy.ContainerID {
		t.Errorf("sidecar after image change: %+v", got)
	}
	if got := statusOfName(st, "app"); got.RestartCount != 0 {
		t.Errorf("app restarted with its sidecar: %+v", got)
	}
}

func TestRunToCompletion(t *testing.T) {
	tests := []struct {
		policy corev1.RestartPolicy
		image  string
		want   corev1.PodPhase
	}{
		{corev1.RestartPolicyNever, imgV1, corev1.PodSucceeded},
		{corev1.RestartPolicyOnFailure, imgV1, corev1.PodSucceeded},
		{corev1.RestartPolicyNever, "reg.test/app:crash", corev1.PodFailed},
	}
	for _, tc := range tests {
		t.Run(string(tc.policy)+"/"+tc.image, func(t *testing.T) {
			reg := registry()
			reg["reg.test/app:crash"] = Image{Digest: dig2, Crash: true}
			pod := testPod(ctrSpec("app", tc.image))
			pod.Spec.RestartPolicy = tc.policy
			pod.Spec.InitContainers = []corev1.Container{sidecarSpec("proxy", imgV1)}
			s := newSim(t, reg, pod)
			st := s.until("finished", 5*time.Second, func(st corev1.PodStatus) bool {
				return st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed
			})
			if st.Phase != tc.want {
				t.Errorf("phase = %s, want %s", st.Phase, tc.want)
			}
			for _, name := range []string{"app", "proxy"} {
				if cs := statusOfName(st, name); cs.State.Terminated == nil {
					t.Errorf("%s not terminated: %+v", name, cs.State)
				}
			}
			if c := findCondition(st.Conditions, corev1.PodReady); c == nil || c.Status != corev1.ConditionFalse {
				t.Errorf("Ready = %+v, want False", c)
			}
		})
	}
}

func TestDeletionStopsContainers(t *testing.T) {
	s := newSim(t, registry(), testPod(ctrSpec("app", imgV1)))
	s.until("ready", time.Second, ready)
	now := metav1.NewTime(s.now)
	s.pod.DeletionTimestamp, s.pod.DeletionGracePeriodSeconds = &now, ptr(int64(30))
	s.until("stopped", time.Second, func(corev1.PodStatus) bool { return s.rt.stopped })
	st := podStatus(s.pod, s.rt, "172.18.0.2", s.now)
	if cs := statusOfName(st, "app"); cs.State.Terminated == nil || cs.Ready {
		t.Errorf("after deletion: %+v, want terminated", cs)
	}
	if countEvents(s.h.events, "Killing: Stopping container app") != 1 {
		t.Errorf("events %q, want one Killing", s.h.events)
	}
}
