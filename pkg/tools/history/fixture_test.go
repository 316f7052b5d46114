package history

import (
	"flag"
	"os"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/tools/history/historytest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

const digest = "sha256:0b31b1c02ff458ad9b7b81cbdf8f028bd54699fa151f221d1e8de6817db93427"

var t0 = time.Date(2026, 11, 20, 10, 2, 11, 0, time.UTC)

// haltedRollout: two pods succeed in wave 1, the third is rolled back in
// wave 2 because its image cannot be pulled; the rollout halts.
func haltedRollout() historytest.Rollout {
	return historytest.Rollout{
		Push: events.ImagePushedData{Registry: "registry.example", Repository: "shop/web", Tag: "1.3.0",
			Digest: digest, PushedAt: t0, Origin: "distribution"},
		Workload: events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web", UID: "uid-d"},
		Pods: []historytest.Pod{
			{Name: "web-0", UID: "uid-0", Node: "node-1", Wave: 1},
			{Name: "web-1", UID: "uid-1", Node: "node-2", Wave: 1},
			{Name: "web-2", UID: "uid-2", Node: "node-1", Wave: 2, Outcome: events.OutcomeRolledBack,
				Reason: "ImagePullBackOff", Message: `Back-off pulling image "registry.example/shop/web:1.3.0"`},
		},
		Start: t0, Step: 250 * time.Millisecond,
	}
}

func chainEvents(t *testing.T, r historytest.Rollout) []cloudevents.Event {
	t.Helper()
	evs, err := r.Events()
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// records numbers evs as a stream would, stored a millisecond after their time.
func records(evs []cloudevents.Event) []Record {
	out := make([]Record, len(evs))
	for i, e := range evs {
		out[i] = Record{Seq: uint64(i + 1), Stored: e.Time().Add(time.Millisecond), Subject: "inplace." + events.Short(e.Type()), Event: e}
	}
	return out
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := "testdata/" + name
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs; got:\n%s\nwant:\n%s", path, got, want)
	}
}
