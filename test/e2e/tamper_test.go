package e2e_test

import (
	"encoding/json"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/verify"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/registry"
	"github.com/inplace-dev/inplace/test/stack"
	"github.com/inplace-dev/inplace/test/world"
)

// A pod patched to a crash-looping image whose inplace.dev/state is then
// edited to name another previous image (one that runs) is rolled back to
// the image the rollout record holds, never the annotation's, with a
// Warning Event naming what the annotation said and what the record
// holds; the rollout halts on the rollback. The process runs without
// verify until the state is edited, then restarts with every function, so
// verify first sees the pod tampered. Refused as tampered and nothing
// more, the pod stayed crash-looping until the deadline halted the rollout.
func TestATamperedStateOnACrashingPodEndsOnTheRecordedImage(t *testing.T) {
	w := world.Shared(t)
	dir := t.TempDir()
	start := func(functions func([]string) []string) (*stack.Stack, func()) {
		s, err := stack.Start(t.Context(), w, stack.Options{Dir: dir,
			Log:     slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
			Process: func(p *config.Process) { p.Functions = functions(p.Functions) }})
		if err != nil {
			t.Fatal(err)
		}
		stop := sync.OnceFunc(s.Stop)
		t.Cleanup(stop)
		return s, stop
	}
	noVerify := func(fs []string) []string {
		return slices.DeleteFunc(fs, func(f string) bool { return f == verify.Name })
	}
	s, stop := start(noVerify)
	e := &env{t: t, w: w, ns: w.NewNamespace(t), s: s}
	e.push("api", "0.9.0")
	e.push("api", "1.0.0")
	recorded, other := e.ref("api", "1.0.0"), e.ref("api", "0.9.0")
	e.deploy(workload{name: "api", replicas: 1, image: recorded,
		annotations: map[string]string{"inplace.dev/policy": "semver:patch"}})
	before := e.pods("api")
	e.push("api", "1.0.1", registry.WithCrash())

	planned, err := events.As[events.Plan](e.waitEvent(events.UpgradePlanned, e.ns+"/api-", time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	pod, err := world.WaitPod(t.Context(), w.Client(), e.ns, planned.Pod.Name, 2*time.Minute, "patched and crash-looping",
		func(p *corev1.Pod) bool {
			st, _ := inplace.ParseState(p)
			cs := world.ContainerStatus(p, "app")
			return st != nil && st.UpgradeID == planned.UpgradeID && cs != nil && cs.RestartCount >= before[p.Name].RestartCount+2
		})
	if err != nil {
		t.Fatal(err)
	}
	e.tamper(pod, other)
	stop()
	e.s, _ = start(func(fs []string) []string { return fs }) // verify comes up and finds the pod tampered

	_, err = world.WaitPod(t.Context(), w.Client(), e.ns, pod.Name, 2*time.Minute, "back on "+recorded, func(p *corev1.Pod) bool {
		cs := world.ContainerStatus(p, "app")
		return p.UID == pod.UID && p.Spec.Containers[0].Image == recorded && cs != nil && cs.ImageID == before[p.Name].ImageID && world.PodReady(p)
	})
	if err != nil {
		t.Fatalf("%v\npod: %+v", err, e.pods("api"))
	}
	tampered := e.eventsOnceThere(pod.Name, verify.EventTampered)[verify.EventTampered]
	if len(tampered) == 0 || !strings.Contains(tampered[0], "names "+other+" as container app's previous image; the rollout record holds "+recorded) {
		t.Errorf("Events %s: %q; want the annotation's %s and the record's %s named", verify.EventTampered, tampered, other, recorded)
	}
	halted, err := events.As[events.RolloutData](e.waitEvent(events.RolloutHalted, "/api", time.Minute))
	if err != nil || halted.Counts.RolledBack != 1 {
		t.Errorf("rollout.halted %+v (%v); want the pod rolled back", halted.Counts, err)
	}
}

// tamper edits the pod's state to name image as every container's
// previous image, as anyone who may patch the pod could.
func (e *env) tamper(pod *corev1.Pod, image string) {
	e.t.Helper()
	st, err := inplace.ParseState(pod)
	if err != nil || st == nil {
		e.t.Fatalf("state: %v", err)
	}
	for i := range st.Containers {
		st.Containers[i].PreviousImage = image
	}
	path := "/metadata/annotations/" + jsonPointer(inplace.StateAnnotation)
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": path, "value": pod.Annotations[inplace.StateAnnotation]},
		{"op": "replace", "path": path, "value": st.Encode()},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.w.Client().CoreV1().Pods(pod.Namespace).Patch(e.t.Context(), pod.Name, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		e.t.Fatal(err)
	}
}
