package history

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/events"
)

const short = "sha256:0b31b1c02ff4"

func TestLine(t *testing.T) {
	recs := records(chainEvents(t, haltedRollout()))
	byType := map[string]Record{}
	for _, r := range recs {
		if _, ok := byType[r.Event.Type()]; !ok {
			byType[r.Event.Type()] = r
		}
	}
	id := haltedRollout().UpgradeID()
	dead := byType[events.PodPatched]
	dead.Dead = &DeadLetter{Function: "verify", Reason: "pod has no state", Deliveries: 10}
	tests := []struct {
		name string
		r    Record
		want string
	}{
		{"push", byType[events.ImagePushed],
			"10:02:11.000  image.pushed         registry.example/shop/web:1.3.0@" + short + " registry.example/shop/web:1.3.0@" + short + " (distribution)"},
		{"planned", byType[events.UpgradePlanned],
			"10:02:11.250  upgrade.planned      shop/web-0               wave 1 → registry.example/shop/web:1.3.0@" + short + "  [" + id + "]"},
		{"prepulled", byType[events.ImagePrepulled],
			"10:02:11.750  image.prepulled      shop/web-0               pulled on node-1 in 800ms  [" + id + "]"},
		{"pod updated", byType[events.PodUpdated],
			"10:02:12.750  pod.updated          shop/web-0               Running; app running (restarts 1, ready)  [" + id + "]"},
		{"succeeded", byType[events.UpgradeSucceeded],
			"10:02:13.250  upgrade.succeeded    shop/web-0               succeeded  [" + id + "]"},
		{"rolled back", byType[events.UpgradeRolledBack],
			"10:02:15.250  upgrade.rolledback   shop/web-2               rolledback ImagePullBackOff: Back-off pulling image \"registry.example/shop/web:1.3.0\"  [" + id + "]"},
		{"halted", byType[events.RolloutHalted],
			"10:02:15.500  rollout.halted       Deployment/shop/web      halted 2/3 succeeded, 1 rolled back; UpgradeRolledBack  [" + id + "]"},
		{"dead letter", dead,
			"10:02:12.251  dlq/verify           shop/web-0               pod.patched dead-lettered: pod has no state (after 10 deliveries)  [" + id + "]"},
		{"unreadable", Record{Seq: 7, Subject: "inplace.junk", Stored: t0, Err: errors.New("no specversion")},
			"10:02:11.000  ?                    inplace.junk             unreadable message #7: no specversion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Line(tt.r, time.UTC); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestLineInLocation(t *testing.T) {
	r := records(chainEvents(t, haltedRollout()))[0]
	if got := Line(r, time.FixedZone("CET", 3600)); !strings.HasPrefix(got, "11:02:11.000") {
		t.Errorf("line not in the given zone: %s", got)
	}
}

// An operator's request says what it is: an undo names the upgrade it undoes.
func TestRequestedDetailSaysUndo(t *testing.T) {
	w := events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}
	d := events.UpgradeRequestData{ImagePushedData: events.ImagePushedData{Registry: "r", Repository: "shop/web", Tag: "1.2.0",
		Origin: "manual"}, Target: &w, AllowOlder: true}
	if got, want := requestedDetail(d), "r/shop/web:1.2.0 (manual) for Deployment/shop/web, allowed to go back"; got != want {
		t.Errorf("got %q; want %q", got, want)
	}
	d.Undo = "u-1"
	if got, want := requestedDetail(d), "r/shop/web:1.2.0 (manual) for Deployment/shop/web, undoing u-1"; got != want {
		t.Errorf("got %q; want %q", got, want)
	}
}
