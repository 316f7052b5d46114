package kubelet

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

const (
	imgV1 = "reg.test/app:v1"
	imgV2 = "reg.test/app:v2"
	dig1  = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	dig2  = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
)

func registry() memResolver {
	return memResolver{imgV1: {Digest: dig1, Size: 4 << 20}, imgV2: {Digest: dig2, Size: 4 << 20}}
}

func TestStartPendingToReady(t *testing.T) {
	s := newSim(t, registry(), testPod(ctrSpec("app", imgV1)))
	st := s.until("creating", time.Second, func(st corev1.PodStatus) bool { return true })
	if got := waitingOf(st, "app"); got != "ContainerCreating" || st.Phase != corev1.PodPending {
		t.Fatalf("first status: waiting %q phase %s, want ContainerCreating, Pending", got, st.Phase)
	}
	st = s.until("running", time.Second, func(st corev1.PodStatus) bool { return st.Phase == corev1.PodRunning })
	if ready(st) {
		t.Errorf("ready as soon as started, want ready only after Start")
	}
	st = s.until("ready", time.Second, ready)
	cs := statusOfName(st, "app")
	want := corev1.ContainerStatus{Name: "app", Image: imgV1, ImageID: "reg.test/app@" + dig1, ContainerID: cs.ContainerID,
		Ready: true, Started: ptr(true), State: corev1.ContainerState{Running: cs.State.Running}}
	if diff := cmp.Diff(want, cs); diff != "" {
		t.Errorf("container status (-want +got):\n%s", diff)
	}
	if st.ObservedGeneration != 1 || st.PodIP != "" && st.HostIP != "172.18.0.2" {
		t.Errorf("observedGeneration %d hostIP %s", st.ObservedGeneration, st.HostIP)
	}
	wantEvents := []string{"Pulling", "Pulled: Successfully pulled image", "Created", "Started"}
	for i, e := range wantEvents {
		if i >= len(s.h.events) || !strings.HasPrefix(s.h.events[i], e) {
			t.Errorf("events = %q, want prefixes %q", s.h.events, wantEvents)
			break
		}
	}
}

func TestImageChangeRestartsInPlace(t *testing.T) {
	s := newSim(t, registry(), testPod(ctrSpec("app", imgV1), ctrSpec("side", imgV1)))
	s.until("ready", time.Second, ready)
	old := statusOfName(s.pod.Status, "app")
	other := statusOfName(s.pod.Status, "side")
	s.setImage("app", imgV2)
	st := s.until("not ready", time.Second, func(st corev1.PodStatus) bool { return !ready(st) })
	if st.ObservedGeneration != 2 {
		t.Errorf("observedGeneration = %d, want 2 once the kubelet acts", st.ObservedGeneration)
	}
	st = s.until("ready on v2", time.Second, func(st corev1.PodStatus) bool {
		return ready(st) && statusOfName(st, "app").ImageID == "reg.test/app@"+dig2
	})
	cs := statusOfName(st, "app")
	if cs.RestartCount != 1 || cs.ContainerID == old.ContainerID || cs.Image != imgV2 {
		t.Errorf("restartCount %d containerID %s image %s, want 1, new, %s", cs.RestartCount, cs.ContainerID, cs.Image, imgV2)
	}
	if lt := cs.LastTerminationState.Terminated; lt == nil || lt.ContainerID != old.ContainerID || lt.Reason != "Completed" {
		t.Errorf("lastState = %+v, want terminated %s", cs.LastTerminationState, old.ContainerID)
	}
	if got := statusOfName(st, "side"); got.ContainerID != other.ContainerID || got.RestartCount != 0 {
		t.Errorf("other container restarted: %+v", got)
	}
	if countEvents(s.h.events, "Killing: Container app definition changed, will be restarted") != 1 {
		t.Errorf("events %q, want one Killing", s.h.events)
	}
}

func TestMissingImageBacksOffThenRecovers(t *testing.T) {
	reg := registry()
	s := newSim(t, reg, testPod(ctrSpec("app", imgV1)))
	s.until("ready", time.Second, ready)
	s.setImage("app", "reg.test/app:v404")
	st := s.until("ErrImagePull", time.Second, func(st corev1.PodStatus) bool { return waitingOf(st, "app") == "ErrImagePull" })
	st = s.until("ImagePullBackOff", time.Second, func(st corev1.PodStatus) bool { return waitingOf(st, "app") == "ImagePullBackOff" })
	cs := statusOfName(st, "app")
	if st.Phase != corev1.PodRunning || ready(st) || cs.RestartCount != 0 || cs.Image != imgV1 || cs.ImageID != "reg.test/app@"+dig1 {
		t.Errorf("phase %s ready %v restartCount %d image %s imageID %s, want Running, not ready, 0, old image",
			st.Phase, ready(st), cs.RestartCount, cs.Image, cs.ImageID)
	}
	if !strings.Contains(cs.State.Waiting.Message, "not found") {
		t.Errorf("waiting message %q, want the pull error", cs.State.Waiting.Message)
	}
	if countEvents(s.h.events, "Failed: Failed to pull image") == 0 || countEvents(s.h.events, "BackOff: Back-off pulling image") == 0 {
		t.Errorf("events %q, want Failed and BackOff", s.h.events)
	}
	reg["reg.test/app:v404"] = Image{Digest: dig2, Size: 1}
	st = s.until("recovered", 10*time.Second, ready)
	if cs := statusOfName(st, "app"); cs.RestartCount != 1 || cs.ImageID != "reg.test/app@"+dig2 {
		t.Errorf("after recovery restartCount %d imageID %s", cs.RestartCount, cs.ImageID)
	}
}

func TestRevertToCachedImageRecovers(t *testing.T) {
	s := newSim(t, registry(), testPod(ctrSpec("app", imgV1)))
	s.until("ready", time.Second, ready)
	s.setImage("app", "reg.test/app:v404")
	s.until("ImagePullBackOff", time.Second, func(st corev1.PodStatus) bool { return waitingOf(st, "app") == "ImagePullBackOff" })
	s.setImage("app", imgV1)
	st := s.until("back on v1", time.Second, ready)
	if cs := statusOfName(st, "app"); cs.RestartCount != 1 || cs.ImageID != "reg.test/app@"+dig1 {
		t.Errorf("restartCount %d imageID %s, want 1 on v1", cs.RestartCount, cs.ImageID)
	}
	if countEvents(s.h.events, "Pulled: Container image \""+imgV1+"\" already present on machine") != 1 {
		t.Errorf("events %q, want v1 found on the node", s.h.events)
	}
}

func TestCrashLoop(t *testing.T) {
	reg := registry()
	reg["reg.test/app:crash"] = Image{Digest: dig2, Size: 1, Crash: true}
	s := newSim(t, reg, testPod(ctrSpec("app", "reg.test/app:crash")))
	st := s.until("CrashLoopBackOff", 10*time.Second, func(st corev1.PodStatus) bool {
		return waitingOf(st, "app") == "CrashLoopBackOff" && statusOfName(st, "app").RestartCount >= 2
	})
	cs := statusOfName(st, "app")
	if lt := cs.LastTerminationState.Terminated; lt == nil || lt.ExitCode != 1 || lt.Reason != "Error" {
		t.Errorf("lastState %+v, want exit 1 Error", cs.LastTerminationState)
	}
	if st.Phase != corev1.PodRunning || ready(st) {
		t.Errorf("phase %s ready %v, want Running, not ready", st.Phase, ready(st))
	}
	if countEvents(s.h.events, "BackOff: Back-off restarting failed container app") == 0 {
		t.Errorf("events %q, want BackOff", s.h.events)
	}
	st = s.until("restartCount 4", 30*time.Second, func(st corev1.PodStatus) bool { return statusOfName(st, "app").RestartCount >= 4 })
}

func TestPullPolicies(t *testing.T) {
	tests := []struct {
		name       string
		policy     corev1.PullPolicy
		cached     bool
		wantEvents []string
		wantWait   string
	}{
		{"IfNotPresent cached", corev1.PullIfNotPresent, true, []string{"Pulled: Container image"}, ""},
		{"IfNotPresent absent", corev1.PullIfNotPresent, false, []string{"Pulling", "Pulled: Successfully"}, ""},
		{"Always cached", corev1.PullAlways, true, []string{"Pulling", "Pulled: Successfully"}, ""},
		{"Never cached", corev1.PullNever, true, []string{"Pulled: Container image"}, ""},
		{"Never absent", corev1.PullNever, false, []string{"ErrImageNeverPull"}, "ErrImageNeverPull"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ctrSpec("app", imgV1)
			c.ImagePullPolicy = tc.policy
			s := newSim(t, registry(), testPod(c))
			if tc.cached {
				if _, err := s.h.cache.pull(imgV1, registry()[imgV1], t0.Add(-time.Hour), s.tm); err != nil {
					t.Fatal(err)
				}
			}
			st := s.until("settled", time.Second, func(st corev1.PodStatus) bool {
				return ready(st) || waitingOf(st, "app") == tc.wantWait && tc.wantWait != ""
			})
			if got := waitingOf(st, "app"); got != tc.wantWait {
				t.Errorf("waiting = %q, want %q", got, tc.wantWait)
			}
			var got []string
			for _, e := range s.h.events {
				for _, w := range tc.wantEvents {
					if strings.HasPrefix(e, w) {
						got = append(got, w)
					}
				}
			}
			if diff := cmp.Diff(tc.wantEvents, got); diff != "" {
				t.Errorf("events %q (-want +got):\n%s", s.h.events, diff)
			}
		})
	}
}
