package templatesync

import (
	"strings"
	"testing"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// The InPlaceTemplateSynced Event reads like the kubelet's: a sentence with
// quoted image names, container by container (before: "template now
// map[app:…] without a rollout (was map[app:…]…)").
func TestSyncedMessageIsASentence(t *testing.T) {
	r := &rollout.Rollout{UpgradeID: "u-1", Workload: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}}
	p := &rollout.Sync{
		PreviousImages: map[string]string{"app": "reg/shop:1.0.0", "proxy": "reg/shop:1.0.0"},
		Images:         map[string]string{"app": "reg/shop:1.1.0@sha256:abc", "proxy": "reg/shop:1.1.0@sha256:abc"},
	}
	got := syncedMessage(r, p)
	want := `Synced the Deployment template to the images its pods run, without a rollout: ` +
		`container app: image "reg/shop:1.0.0" → "reg/shop:1.1.0@sha256:abc"; ` +
		`container proxy: image "reg/shop:1.0.0" → "reg/shop:1.1.0@sha256:abc" (upgrade u-1); ` +
		`to go back in place, not by a rollout: inplace undo deployment/web -n shop`
	if got != want {
		t.Errorf("message:\n%s\nwant:\n%s", got, want)
	}
	for _, goSyntax := range []string{"map[", "[]", "{", "%!"} {
		if strings.Contains(got, goSyntax) {
			t.Errorf("message shows Go syntax %q: %s", goSyntax, got)
		}
	}
}

// Those who would reach for kubectl rollout undo find inplace undo named
// in the Event; an undo's own sync says what it undid, in the Event and the
// change-cause kubectl rollout history shows.
func TestUndoIsNamed(t *testing.T) {
	r := &rollout.Rollout{UpgradeID: "u-2", Workload: events.ObjectRef{Kind: "StatefulSet", Namespace: "shop", Name: "cart"},
		Push: events.UpgradeRequestData{Undo: "u-1"}}
	p := &rollout.Sync{PreviousImages: map[string]string{"app": "reg/shop:1.1.0@sha256:abc"}, Images: map[string]string{"app": "reg/shop:1.0.0@sha256:def"}}
	if got, want := syncedMessage(r, p), "(upgrade u-2, the undo of u-1); to go back in place, not by a rollout: inplace undo statefulset/cart -n shop"; !strings.HasSuffix(got, want) {
		t.Errorf("message:\n%s\nwant it to end with:\n%s", got, want)
	}
	if got, want := cause(r, p.Images), "inplace undo of u-1 (upgrade u-2): app=reg/shop:1.0.0@sha256:def in place, without a rollout"; got != want {
		t.Errorf("change-cause %q; want %q", got, want)
	}
}
