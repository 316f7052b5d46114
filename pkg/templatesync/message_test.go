package templatesync

import (
	"strings"
	"testing"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/rollout"
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
		`container proxy: image "reg/shop:1.0.0" → "reg/shop:1.1.0@sha256:abc" (upgrade u-1)`
	if !strings.HasPrefix(got, want) {
		t.Errorf("message:\n%s\nwant it to start with:\n%s", got, want)
	}
	for _, goSyntax := range []string{"map[", "[]", "{", "%!"} {
		if strings.Contains(got, goSyntax) {
			t.Errorf("message shows Go syntax %q: %s", goSyntax, got)
		}
	}
}
