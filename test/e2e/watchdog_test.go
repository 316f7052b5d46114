package e2e_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/test/stack"
	"github.com/inplace-dev/inplace/test/world"
)

// Every outcome of a rollout is lost on its way to compute-spec: verify
// does not run, and the test does its work (it closes each patched pod's
// state as Succeeded once the new container runs) without publishing
// anything. No event will ever say a pod is done, yet the rollout
// completes: compute-spec's watchdog reads the outcomes from the pods'
// state and records them.
func TestLostOutcomesDoNotStrandARollout(t *testing.T) {
	t.Setenv("INPLACE_WATCHDOG_PERIOD", "1s")
	w := world.Shared(t)
	s, err := stack.Start(t.Context(), w, stack.Options{Dir: t.TempDir(),
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Process: func(p *config.Process) {
			p.Functions = slices.DeleteFunc(p.Functions, func(f string) bool { return f == "verify" })
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	e := &env{t: t, w: w, ns: w.NewNamespace(t), s: s}
	e.push("shop", "1.0.0")
	e.deploy(workload{name: "web", replicas: 3, image: e.ref("shop", "1.0.0"),
		annotations: map[string]string{"inplace.dev/policy": "semver:minor", "inplace.dev/max-unavailable": "1"}})
	digest := e.push("shop", "1.1.0")

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go e.playVerify(ctx, digest)
	done := e.waitEvent(events.RolloutCompleted, "/web", 3*time.Minute)
	d, err := events.As[events.RolloutData](done)
	if err != nil {
		t.Fatal(err)
	}
	if d.Counts.Succeeded != 3 || !d.TemplateSynced {
		t.Errorf("rollout.completed: %+v", d)
	}
	if n := len(e.stream(events.UpgradeSucceeded)); n != 0 {
		t.Errorf("%d upgrade.succeeded on the stream; the test meant every outcome to be lost", n)
	}
}

// playVerify does verify's work without its events: a pod patched for an
// upgrade whose new container runs Ready gets its state closed Succeeded.
func (e *env) playVerify(ctx context.Context, digest string) {
	for ctx.Err() == nil {
		list, err := e.w.Client().CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err == nil {
			for _, p := range list.Items {
				st, err := inplace.ParseState(&p)
				cs := world.ContainerStatus(&p, "app")
				if err != nil || st == nil || st.Phase != inplace.PhasePatched || cs == nil ||
					imageref.DigestOf(cs.ImageID) != digest || !world.PodReady(&p) {
					continue
				}
				st.Phase, st.Reason, st.FinishedAt = inplace.PhaseSucceeded, "Updated", time.Now().UTC()
				patch, _ := json.Marshal([]map[string]any{
					{"op": "test", "path": "/metadata/resourceVersion", "value": p.ResourceVersion},
					{"op": "replace", "path": "/metadata/annotations/" + jsonPointer(inplace.StateAnnotation), "value": st.Encode()},
				})
				_, _ = e.w.Client().CoreV1().Pods(e.ns).Patch(ctx, p.Name, types.JSONPatchType, patch, metav1.PatchOptions{})
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// jsonPointer escapes a map key for a JSON pointer (RFC 6901).
func jsonPointer(s string) string {
	out := []rune{}
	for _, r := range s {
		switch r {
		case '~':
			out = append(out, '~', '0')
		case '/':
			out = append(out, '~', '1')
		default:
			out = append(out, r)
		}
	}
	return string(out)
}
