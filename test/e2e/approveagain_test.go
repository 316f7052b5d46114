package e2e_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/pkg/core/policy"
	"github.com/inplace-dev/inplace/test/world"
)

// An approval compute-spec refused (the Deployment was paused meanwhile:
// the decision is dead-lettered with "approve again once it may move") is
// made again by running `inplace approve` again once the Deployment is
// unpaused: a decision of its own, not dropped as a copy of the first
// while the stream remembers its id, and the rollout completes.
func TestApprovingAgainAfterARefusedApproval(t *testing.T) {
	e := newEnv(t)
	e.push("gated", "1.4.0")
	e.deploy(workload{name: "gated", replicas: 2, image: e.ref("gated", "1.4.0"),
		annotations: map[string]string{"inplace.dev/policy": "semver:major", "inplace.dev/approval": "major",
			"inplace.dev/max-unavailable": "2"}})
	d2 := e.push("gated", "2.0.0")
	upgradeID := events.UpgradeID(e.waitEvent(events.UpgradeApprovalRequested, "/gated", time.Minute))

	e.setPaused("gated", "true")
	out, err := e.inplace(append([]string{"approve", upgradeID}, e.bus()...)...)
	if err != nil {
		t.Fatalf("inplace approve: %v\n%s", err, out)
	}
	e.waitDeadLetter(computespec.Name, "approve again once it may move", time.Minute)

	e.setPaused("gated", "false")
	out, err = e.inplace(append([]string{"approve", upgradeID}, e.bus()...)...)
	if err != nil || strings.Contains(out, "already") {
		t.Fatalf("inplace approve again: %v\n%s", err, out)
	}
	e.waitAllOn("gated", 2, d2, 3*time.Minute)
	e.waitEvent(events.RolloutCompleted, "/gated", time.Minute)
}

// setPaused sets the Deployment's inplace.dev/paused and waits until the
// stack's cache shows it.
func (e *env) setPaused(name, value string) {
	e.t.Helper()
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{policy.AnnotationPaused: value}}})
	if _, err := e.w.Client().AppsV1().Deployments(e.ns).Patch(e.t.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		e.t.Fatal(err)
	}
	ref := events.ObjectRef{Kind: "Deployment", Namespace: e.ns, Name: name}
	err := world.Eventually(e.t.Context(), 30*time.Second, name+" paused="+value+" in the cache", func(context.Context) (bool, error) {
		w, ok, err := e.s.App.Cache.Get(ref)
		return ok && w.Meta.Annotations[policy.AnnotationPaused] == value, err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}
