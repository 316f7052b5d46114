package kubelet

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestRecreationCosts: a new pod pays Timings.Sandbox for its sandbox and
// network, and Timings.VolumeAttach before that when it mounts a
// PersistentVolumeClaim; an image change of the running pod pays neither
// (its sandbox and volumes stay), only stop and start.
func TestRecreationCosts(t *testing.T) {
	tm := FastTimings()
	tm.Sandbox, tm.VolumeAttach = 1500*time.Millisecond, 15*time.Second
	slack := 2 * tm.RelistPeriod // the first sync and the Ready write each wait for a relist
	tests := []struct {
		name      string
		claim     bool
		wantReady time.Duration // at least this long from creation to Ready
	}{
		{"no claim: sandbox and start", false, tm.Sandbox + tm.Start},
		{"claimed volume: attach, sandbox and start", true, tm.VolumeAttach + tm.Sandbox + tm.Start},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod(ctrSpec("app", imgV1))
			if tc.claim {
				pod.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-p"}}}}
			}
			s := newSimWith(t, registry(), pod, tm)
			s.h.cache.record(imgV1, "reg.test/app@"+dig1, Image{Digest: dig1, Size: 4 << 20}, t0, false)
			s.h.cache.record(imgV2, "reg.test/app@"+dig2, Image{Digest: dig2, Size: 4 << 20}, t0, false)
			created := s.now
			s.until("ready", time.Minute, ready)
			took := s.now.Sub(created)
			if took < tc.wantReady || took > tc.wantReady+slack {
				t.Errorf("new pod Ready after %v, want %v (+ up to %v of relists)", took, tc.wantReady, slack)
			}
			s.setImage("app", imgV2)
			changed := s.now
			s.until("restarted", time.Minute, func(st corev1.PodStatus) bool {
				return statusOfName(st, "app").RestartCount == 1 && ready(st)
			})
			want := tm.Stop + tm.Start
			if took := s.now.Sub(changed); took < want || took > want+slack {
				t.Errorf("in-place restart took %v, want %v (+ up to %v of relists): no sandbox, no attach", took, want, slack)
			}
		})
	}
}
