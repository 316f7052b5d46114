package events_test

import (
	"strings"
	"testing"

	"github.com/inplace-dev/inplace/events"
)

// TestRolloutIDs: each id is its kind's prefix and 12 hex digits derived
// from the input id and the workload, the same on every call, different
// for another workload or input.
func TestRolloutIDs(t *testing.T) {
	w := events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}
	other := events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "api"}
	for _, tt := range []struct {
		prefix string
		derive func(string, events.ObjectRef) string
	}{
		{"u-", events.DeriveUpgradeID},
		{"z-", events.DeriveResizeID},
		{"r-", events.DeriveRestartID},
	} {
		t.Run(tt.prefix, func(t *testing.T) {
			got := tt.derive("in-1", w)
			if !strings.HasPrefix(got, tt.prefix) || len(got) != len(tt.prefix)+12 {
				t.Errorf("id %q: want %s and 12 hex digits", got, tt.prefix)
			}
			if again := tt.derive("in-1", w); again != got {
				t.Errorf("derived %q then %q from the same input", got, again)
			}
			if tt.derive("in-1", other) == got || tt.derive("in-2", w) == got {
				t.Errorf("another workload or input derived the same id %q", got)
			}
		})
	}
}
