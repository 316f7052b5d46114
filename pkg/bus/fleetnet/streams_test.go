package fleetnet

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTheHubSourcesEachMembersOwnSubjects: the hub's source of a member's
// stream filters on that member's subjects, so a member whose server
// stores another cluster's subjects cannot pass them to the hub.
func TestTheHubSourcesEachMembersOwnSubjects(t *testing.T) {
	cfg, err := HubStreamConfig([]string{"staging", "prod-eu"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range cfg.Sources {
		got = append(got, s.External.APIPrefix+" "+s.FilterSubject)
	}
	want := []string{"$JS.staging.API fleet.staging.rollout.>", "$JS.prod-eu.API fleet.prod-eu.rollout.>"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
}
