package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// The undo push is read from the rollout record: the image the pods of the
// last rollout that moved them ran before it, by digest, restricted to the
// containers it moved, naming the upgrade undone; a rollout under way or
// a workload without one is an error and nothing is published.
func TestUndoPushFromTheRecord(t *testing.T) {
	const d12, d13 = "sha256:1212121212121212121212121212121212121212121212121212121212121212",
		"sha256:1313131313131313131313131313131313131313131313131313131313131313"
	ref := events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}
	record := func(phase rollout.Phase) *rollout.Rollout {
		return &rollout.Rollout{UpgradeID: "u-1", Workload: ref, Phase: phase,
			Push: events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{Registry: "r.example", Repository: "shop/web",
				Tag: "1.3.0", Digest: d13, Origin: "test"}},
			Pods: map[string]*rollout.Pod{"web-0": {Name: "web-0", State: rollout.Succeeded, UpgradeID: "u-1",
				Containers: []events.ContainerPlan{{Name: "app", FromImage: "r.example/shop/web:1.2.0",
					FromImageID: "r.example/shop/web@" + d12, ToImage: "r.example/shop/web:1.3.0@" + d13}}}}}
	}
	push, last, err := undoPush(ref, record(rollout.Completed))
	if err != nil {
		t.Fatal(err)
	}
	want := events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{Registry: "r.example", Repository: "shop/web",
		Tag: "1.2.0", Digest: d12, Origin: "manual"}, Target: &ref, Containers: []string{"app"}, AllowOlder: true, Undo: "u-1"}
	if diff := cmp.Diff(want, push); diff != "" || last.UpgradeID != "u-1" {
		t.Errorf("undo push of u-1 (-want +got):\n%s", diff)
	}
	if err := push.Validate(); err != nil {
		t.Errorf("the undo push is not valid: %v", err)
	}
	refused := record(rollout.Completed)
	next := rollout.Begin(refused, "u-2", ref, events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{
		Registry: "r.example", Repository: "shop/web", Tag: "1.4.0", Origin: "test"}}, rollout.Options{}, time.Now())
	next.Phase = rollout.Refused
	if p, _, err := undoPush(ref, next); err != nil || p.Undo != "u-1" || p.Digest != d12 {
		t.Errorf("after a refused push: %+v, %v; want the undo of u-1", p, err)
	}
	for _, tc := range []struct {
		name string
		r    *rollout.Rollout
		want string
	}{
		{"no record", nil, "no rollout recorded"},
		{"running", record(rollout.Running), "undo it once it has ended"},
		{"awaiting approval", record(rollout.AwaitingApproval), "undo it once it has ended"},
	} {
		if _, _, err := undoPush(ref, tc.r); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
}
