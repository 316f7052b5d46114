package kubelet

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
	st := s.until("ready", 2*time.Second, ready)
	first := s.writes[0]
	if got := waitingOf(first, "app"); got != "PodInitializing" || first.Phase != corev1.PodPending || waitingOf(first, "setup") != "PodInitializing" {
		t.Errorf("first status: app %q setup %q phase %s, want PodInitializing, Pending", got, waitingOf(first, "setup"), first.Phase)
	}
	if names := []string{first.InitContainerStatuses[0].Name, first.InitContainerStatuses[1].Name}; !cmp.Equal(names, []string{"setup", "proxy"}) {
		t.Errorf("init container statuses in order %q, want the spec's", names)
	}
	setup := statusOfName(st, "setup")
	if setup.State.Terminated == nil || setup.State.Terminated.Reason != "Completed" || !setup.Ready || setup.Resources == nil {
		t.Errorf("init container %+v, want terminated Completed, ready, with resources", setup)
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
	if countEvents(s.h.events, "Killing: Init container proxy definition changed") != 1 {
		t.Errorf("events %q, want one Killing of the sidecar", s.h.events)
	}
}

// TestRunToCompletion: a pod that does not restart shows its containers
// terminated (PodCompleted or PodFailed conditions) while its phase stays
// what it was; the phase turns final once its sandbox is stopped
// (PodReadyToStartContainers False).
func TestRunToCompletion(t *testing.T) {
	tests := []struct {
		policy corev1.RestartPolicy
		image  string
		want   corev1.PodPhase
		reason string
	}{
		{corev1.RestartPolicyNever, imgV1, corev1.PodSucceeded, "PodCompleted"},
		{corev1.RestartPolicyOnFailure, imgV1, corev1.PodSucceeded, "PodCompleted"},
		{corev1.RestartPolicyNever, "reg.test/app:crash", corev1.PodFailed, "PodFailed"},
	}
	for _, tc := range tests {
		t.Run(string(tc.policy)+"/"+tc.image, func(t *testing.T) {
			reg := registry()
			reg["reg.test/app:crash"] = Image{Digest: dig2, Crash: true}
			pod := testPod(ctrSpec("app", tc.image))
			pod.Spec.RestartPolicy = tc.policy
			s := newSim(t, reg, pod)
			st := s.until("finished", 5*time.Second, func(st corev1.PodStatus) bool {
				return st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed
			})
			if st.Phase != tc.want {
				t.Errorf("phase = %s, want %s", st.Phase, tc.want)
			}
			held := s.writes[len(s.writes)-2]
			if c := findCondition(held.Conditions, corev1.ContainersReady); held.Phase == tc.want || c.Reason != tc.reason ||
				statusOfName(held, "app").State.Terminated == nil || !sandboxCondition(held) {
				t.Errorf("status before the final one: %s (ContainersReady %s), want terminated, %s, phase not final yet, sandbox ready",
					shape(held), c.Reason, tc.reason)
			}
			if sandboxCondition(st) {
				t.Errorf("final status %s: want PodReadyToStartContainers False", shape(st))
			}
			if c := findCondition(st.Conditions, corev1.PodReady); c == nil || c.Status != corev1.ConditionFalse || c.Reason != tc.reason {
				t.Errorf("Ready = %+v, want False %s", c, tc.reason)
			}
		})
	}
}

func sandboxCondition(st corev1.PodStatus) bool {
	c := findCondition(st.Conditions, corev1.PodReadyToStartContainers)
	return c != nil && c.Status == corev1.ConditionTrue
}

// TestSidecarStoppedWhenDone: once the regular containers of a pod that
// does not restart are done, its sidecar is stopped and the pod succeeds.
func TestSidecarStoppedWhenDone(t *testing.T) {
	pod := testPod(ctrSpec("app", imgV1))
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	pod.Spec.InitContainers = []corev1.Container{sidecarSpec("proxy", imgV1)}
	s := newSim(t, registry(), pod)
	st := s.until("finished", 5*time.Second, func(st corev1.PodStatus) bool { return st.Phase == corev1.PodSucceeded })
	for _, name := range []string{"app", "proxy"} {
		if cs := statusOfName(st, name); cs.State.Terminated == nil {
			t.Errorf("%s not terminated: %+v", name, cs.State)
		}
	}
	if countEvents(s.h.events, "Killing: Stopping container proxy") != 1 {
		t.Errorf("events %q, want the sidecar stopped", s.h.events)
	}
}

func TestDeletionStopsContainers(t *testing.T) {
	s := newSim(t, registry(), testPod(ctrSpec("app", imgV1)))
	s.until("ready", time.Second, ready)
	now := metav1.NewTime(s.now)
	s.pod = s.pod.DeepCopy()
	s.pod.DeletionTimestamp, s.pod.DeletionGracePeriodSeconds = &now, ptr(int64(30))
	s.w.poke()
	st := s.until("stopped", time.Second, func(st corev1.PodStatus) bool { return s.deleted })
	if cs := statusOfName(st, "app"); cs.State.Terminated == nil || cs.Ready || st.Phase != corev1.PodSucceeded {
		t.Errorf("after deletion: phase %s app %+v, want Succeeded, terminated", st.Phase, cs)
	}
	if countEvents(s.h.events, "Killing: Stopping container app") != 1 {
		t.Errorf("events %q, want one Killing", s.h.events)
	}
}

// TestGateLatency: the kubelet acts on a readiness gate's change at its
// next sync, which waits for a relist after the previous sync ended: set
// in the instant of a sync, the gate moves Ready one relist period later.
func TestGateLatency(t *testing.T) {
	const gate = "inplace.dev/ready"
	pod := testPod(ctrSpec("app", imgV1))
	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: gate}}
	s := newSim(t, registry(), pod)
	s.until("containers ready", time.Second, func(st corev1.PodStatus) bool {
		c := findCondition(st.Conditions, corev1.ContainersReady)
		return c != nil && c.Status == corev1.ConditionTrue
	})
	if ready(s.pod.Status) {
		t.Fatalf("Ready with the gate missing: %s", shape(s.pod.Status))
	}
	for _, status := range []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse} {
		set := s.now
		s.setCondition(gate, status)
		st := s.until("Ready follows the gate", time.Second, func(st corev1.PodStatus) bool { return ready(st) == (status == corev1.ConditionTrue) })
		if d := s.now.Sub(set); d != s.tm.RelistPeriod {
			t.Errorf("gate %s: Ready %v after %v, want after one relist (%v)", status, ready(st), d, s.tm.RelistPeriod)
		}
	}
}

// TestCommandMissingFromTheImage: a container whose command names a
// program its image does not hold (a test-world image holds only its
// entrypoint's, no /bin/true) fails to start as runc fails it on a real
// node: "Failed" with the runtime's error, no "Started", terminated
// StartError 128, and a pod that does not restart Failed. The same
// command under one of its volume mounts starts.
func TestCommandMissingFromTheImage(t *testing.T) {
	tests := []struct {
		name    string
		mount   string
		want    corev1.PodPhase
		reason  string
		code    int32
		failed  int
		started int
	}{
		{"not in the image", "", corev1.PodFailed, "StartError", 128, 1, 0},
		{"under a volume mount", "/tools", corev1.PodSucceeded, "Completed", 0, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := registry()
			reg[imgV1] = Image{Digest: reg[imgV1].Digest, Size: reg[imgV1].Size, Programs: []string{"/app"}}
			c := ctrSpec("app", imgV1)
			c.Command = []string{"/tools/true"}
			if tc.mount != "" {
				c.VolumeMounts = []corev1.VolumeMount{{Name: "tools", MountPath: tc.mount}}
			}
			pod := testPod(c)
			pod.Spec.RestartPolicy = corev1.RestartPolicyNever
			s := newSim(t, reg, pod)
			st := s.until("finished", 5*time.Second, func(st corev1.PodStatus) bool {
				return st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed
			})
			cs := statusOfName(st, "app")
			if term := cs.State.Terminated; st.Phase != tc.want || term == nil || term.Reason != tc.reason || term.ExitCode != tc.code ||
				cs.ImageID == "" {
				t.Errorf("phase %s, app %+v; want %s, terminated %s %d, an imageID (the image was pulled)", st.Phase, cs, tc.want, tc.reason, tc.code)
			}
			if n := countEvents(s.h.events, `Failed: Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "/tools/true": stat /tools/true: no such file or directory`); n != tc.failed {
				t.Errorf("%d Failed events (%q), want %d", n, s.h.events, tc.failed)
			}
			if n := countEvents(s.h.events, "Started:"); n != tc.started {
				t.Errorf("%d Started events (%q), want %d", n, s.h.events, tc.started)
			}
		})
	}
}
