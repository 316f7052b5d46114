package kubelet

import (
	"fmt"
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

	condsPending = "PodReadyToStartContainers=False Initialized=True Ready=False ContainersReady=False PodScheduled=True"
	condsReady   = "PodReadyToStartContainers=True Initialized=True Ready=True ContainersReady=True PodScheduled=True"
	condsUnready = "PodReadyToStartContainers=True Initialized=True Ready=False ContainersReady=False PodScheduled=True"
)

func registry() memResolver {
	return memResolver{imgV1: {Digest: dig1, Size: 4 << 20}, imgV2: {Digest: dig2, Size: 4 << 20}}
}

// appStates lists container app's state and restart count in each status
// written since write i, repeats collapsed.
func (s *sim) appStates(i int) []string {
	var out []string
	for _, st := range s.writes[i:] {
		cs := statusOfName(st, "app")
		v := fmt.Sprintf("%s r%d", stateOf(cs.State), cs.RestartCount)
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}

// TestStartPendingToReady: the first status of a new pod is Pending with
// no sandbox yet; the next shows the container running and ready in the
// same write (no readiness probe), with PodScheduled=True added.
func TestStartPendingToReady(t *testing.T) {
	s := newSim(t, registry(), testPod(ctrSpec("app", imgV1)))
	st := s.until("ready", time.Second, ready)
	want := []string{
		"Pending [" + condsPending + "] app{waiting:ContainerCreating ready=false restarts=0 image=" + imgV1 + " last=-}",
		"Running [" + condsReady + "] app{running ready=true restarts=0 image=" + imgV1 + " last=-}",
	}
	if diff := cmp.Diff(want, s.shapesSince(0)); diff != "" {
		t.Errorf("statuses written (-want +got):\n%s", diff)
	}
	cs := statusOfName(st, "app")
	wantCS := corev1.ContainerStatus{Name: "app", Image: imgV1, ImageID: "reg.test/app@" + dig1, ContainerID: cs.ContainerID,
		Ready: true, Started: ptr(true), State: corev1.ContainerState{Running: cs.State.Running},
		Resources: &corev1.ResourceRequirements{}}
	if diff := cmp.Diff(wantCS, cs); diff != "" {
		t.Errorf("container status (-want +got):\n%s", diff)
	}
	if st.ObservedGeneration != 1 || st.HostIP != "172.18.0.2" || st.PodIP != "10.244.0.2" || s.writes[0].PodIP != "" {
		t.Errorf("observedGeneration %d hostIP %s podIP %s (first %q), want 1, the node's, the sandbox's (none before)",
			st.ObservedGeneration, st.HostIP, st.PodIP, s.writes[0].PodIP)
	}
	wantEvents := []string{"Pulling", "Pulled: Successfully pulled image", "Created", "Started"}
	for i, e := range wantEvents {
		if i >= len(s.h.events) || !strings.HasPrefix(s.h.events[i], e) {
			t.Errorf("events = %q, want prefixes %q", s.h.events, wantEvents)
			break
		}
	}
}

// TestImageChangeRestartsInPlace: during an image-change restart nothing
// new is written; the status jumps from the old container running and
// Ready to the new one running and Ready, restartCount 1, the old
// container as lastState (Completed, exit 0). The other container stays.
func TestImageChangeRestartsInPlace(t *testing.T) {
	s := newSim(t, registry(), testPod(ctrSpec("app", imgV1), ctrSpec("side", imgV1)))
	s.until("ready", time.Second, ready)
	old := statusOfName(s.pod.Status, "app")
	other := statusOfName(s.pod.Status, "side")
	before := len(s.writes)
	s.setImage("app", imgV2)
	st := s.until("ready on v2", time.Second, func(st corev1.PodStatus) bool {
		return statusOfName(st, "app").ImageID == "reg.test/app@"+dig2
	})
	for _, w := range s.writes[before:] {
		if !ready(w) {
			t.Errorf("a status written during the restart is not Ready: %s", shape(w))
		}
	}
	if got := s.writes[before].ObservedGeneration; got != 2 || statusOfName(s.writes[before], "app").ContainerID != old.ContainerID {
		t.Errorf("first write after the change: observedGeneration %d, container %s; want 2 on the old container", got,
			statusOfName(s.writes[before], "app").ContainerID)
	}
	cs := statusOfName(st, "app")
	if cs.RestartCount != 1 || cs.ContainerID == old.ContainerID || cs.Image != imgV2 || !cs.Ready {
		t.Errorf("restartCount %d containerID %s image %s ready %v, want 1, new, %s, ready", cs.RestartCount, cs.ContainerID, cs.Image, cs.Ready, imgV2)
	}
	if lt := cs.LastTerminationState.Terminated; lt == nil || lt.ContainerID != old.ContainerID || lt.Reason != "Completed" || lt.ExitCode != 0 {
		t.Errorf("lastState = %+v, want terminated Completed (0) %s", cs.LastTerminationState, old.ContainerID)
	}
	if got := statusOfName(st, "side"); got.ContainerID != other.ContainerID || got.RestartCount != 0 {
		t.Errorf("other container restarted: %+v", got)
	}
	if countEvents(s.h.events, "Killing: Container app definition changed, will be restarted") != 1 {
		t.Errorf("events %q, want one Killing", s.h.events)
	}
}

// TestMissingImageBacksOffThenRecovers: the old container stopped, its
// image and imageID still shown, ErrImagePull then ImagePullBackOff
// (each one sync late) alternate with the back-off; once the tag exists
// the container starts (restartCount 1).
func TestMissingImageBacksOffThenRecovers(t *testing.T) {
	reg := registry()
	s := newSim(t, reg, testPod(ctrSpec("app", imgV1)))
	s.until("ready", time.Second, ready)
	before := len(s.writes)
	s.setImage("app", "reg.test/app:v404")
	st := s.until("ErrImagePull twice", 10*time.Second, func(corev1.PodStatus) bool {
		return countStates(s.appStates(before), "waiting:ErrImagePull r0") == 2
	})
	want := []string{"running r0", "waiting:ErrImagePull r0", "waiting:ImagePullBackOff r0", "waiting:ErrImagePull r0"}
	if diff := cmp.Diff(want, s.appStates(before)); diff != "" {
		t.Errorf("app states (-want +got):\n%s", diff)
	}
	cs := statusOfName(st, "app")
	if st.Phase != corev1.PodRunning || ready(st) || cs.Image != imgV1 || cs.ImageID != "reg.test/app@"+dig1 ||
		cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.Reason != "Completed" {
		t.Errorf("phase %s ready %v image %s imageID %s lastState %+v, want Running, not ready, the old image, terminated Completed",
			st.Phase, ready(st), cs.Image, cs.ImageID, cs.LastTerminationState)
	}
	wantMsg := `failed to pull and unpack image "reg.test/app:v404": failed to resolve reference "reg.test/app:v404": reg.test/app:v404: not found`
	if cs.State.Waiting.Message != wantMsg {
		t.Errorf("waiting message %q, want %q", cs.State.Waiting.Message, wantMsg)
	}
	for _, e := range []string{"Failed: Failed to pull image \"reg.test/app:v404\": " + wantMsg, "Failed: Error: ErrImagePull",
		"BackOff: Back-off pulling image \"reg.test/app:v404\"", "Failed: Error: ImagePullBackOff"} {
		if countEvents(s.h.events, e) == 0 {
			t.Errorf("events %q, want %q", s.h.events, e)
		}
	}
	reg["reg.test/app:v404"] = Image{Digest: dig2, Size: 1}
	st = s.until("recovered", 10*time.Second, ready)
	if cs := statusOfName(st, "app"); cs.RestartCount != 1 || cs.ImageID != "reg.test/app@"+dig2 {
		t.Errorf("after recovery restartCount %d imageID %s", cs.RestartCount, cs.ImageID)
	}
}

// TestRevertToCachedImageRecovers: back on the old image, the next status
// still shows the last pull error (the reason cache lags one sync), then
// the container runs again, its image found on the node.
func TestRevertToCachedImageRecovers(t *testing.T) {
	s := newSim(t, registry(), testPod(ctrSpec("app", imgV1)))
	s.until("ready", time.Second, ready)
	s.setImage("app", "reg.test/app:v404")
	s.until("ImagePullBackOff", 5*time.Second, func(st corev1.PodStatus) bool { return waitingOf(st, "app") == "ImagePullBackOff" })
	before := len(s.writes)
	s.setImage("app", imgV1)
	st := s.until("back on v1", time.Second, ready)
	want := []string{"waiting:ErrImagePull r0", "running r1"}
	if diff := cmp.Diff(want, s.appStates(before)); diff != "" {
		t.Errorf("app states (-want +got):\n%s", diff)
	}
	if cs := statusOfName(st, "app"); cs.RestartCount != 1 || cs.ImageID != "reg.test/app@"+dig1 {
		t.Errorf("restartCount %d imageID %s, want 1 on v1", cs.RestartCount, cs.ImageID)
	}
	if countEvents(s.h.events, `Pulled: Container image "`+imgV1+`" already present on machine and can be accessed by the pod`) != 1 {
		t.Errorf("events %q, want v1 found on the node", s.h.events)
	}
}

// TestCrashLoop: an exited container shows terminated (Error, 1); the
// first crash restarts at once, later ones wait, and CrashLoopBackOff is
// shown only by the sync after one that met the back-off.
func TestCrashLoop(t *testing.T) {
	reg := registry()
	reg["reg.test/app:crash"] = Image{Digest: dig2, Size: 1, Crash: true}
	s := newSim(t, reg, testPod(ctrSpec("app", "reg.test/app:crash")))
	s.until("restartCount 3", 30*time.Second, func(st corev1.PodStatus) bool { return statusOfName(st, "app").RestartCount >= 3 })
	want := []string{"waiting:ContainerCreating r0", "running r0", "terminated:Error/1 r0", "terminated:Error/1 r1",
		"waiting:CrashLoopBackOff r1", "terminated:Error/1 r2", "waiting:CrashLoopBackOff r2"}
	if got := s.appStates(0); len(got) < len(want) || !cmp.Equal(want, got[:len(want)]) {
		t.Errorf("app states = %q, want them to begin with %q", got, want)
	}
	for _, st := range s.writes {
		if cs := statusOfName(st, "app"); cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff" {
			if lt := cs.LastTerminationState.Terminated; lt == nil || lt.ExitCode != 1 || lt.Reason != "Error" || st.Phase != corev1.PodRunning || ready(st) {
				t.Errorf("in CrashLoopBackOff: lastState %+v phase %s ready %v, want exit 1 Error, Running, not ready", lt, st.Phase, ready(st))
			}
		}
	}
	if countEvents(s.h.events, "BackOff: Back-off restarting failed container app in pod p_ns(uid-1)") == 0 {
		t.Errorf("events %q, want BackOff", s.h.events)
	}
}

func countStates(states []string, s string) int {
	n := 0
	for _, x := range states {
		if x == s {
			n++
		}
	}
	return n
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
		{"Never absent", corev1.PullNever, false, []string{"ErrImageNeverPull", "Failed: Error: ErrImageNeverPull"}, "ErrImageNeverPull"},
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
