package fleetnet_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
)

// TestOutcomesReachTheHubAfterAPartition: each member's outcomes, stored
// in its own domain, reach the hub's stream; while the hub is down a
// member's JetStream and KV keep working, and what it recorded meanwhile
// reaches the hub once the hub is back, each message once.
func TestOutcomesReachTheHubAfterAPartition(t *testing.T) {
	ctx := t.Context()
	f := newFleet(t, fleetnet.MemberPerms, "a", "b")
	for _, c := range []string{"a", "b"} {
		if err := fleetnet.SetupMember(ctx, js(t, f.memberConn(c)), fleetnet.Member{Cluster: c}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fleetnet.SetupHub(ctx, js(t, f.hubConn()), []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	a, b := js(t, f.memberConn("a")), js(t, f.memberConn("b"))
	record(t, a, "a", 1)
	record(t, b, "b", 1)
	want := []string{"fleet.a.rollout.completed 1", "fleet.b.rollout.completed 1"}
	hubHas(t, f, want)
	if again, err := fleetnet.Resync(ctx, js(t, f.hubConn()), f.hub.LeafNames()); err != nil || len(again) > 0 {
		t.Errorf("Resync with every source live restarted %v (%v), want none", again, err)
	}

	f.hub.Shutdown()
	kv, err := a.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "progress"})
	if err != nil {
		t.Fatalf("member a's KV with the hub away: %v", err)
	}
	if _, err := kv.Put(ctx, "Deployment/ns/web", []byte("wave 2")); err != nil {
		t.Fatalf("member a's KV with the hub away: %v", err)
	}
	record(t, a, "a", 2)
	record(t, a, "a", 3)

	f.startHub()
	f.waitJoined()
	restarted, err := fleetnet.Resync(ctx, js(t, f.hubConn()), f.hub.LeafNames())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, restarted); diff != "" {
		t.Errorf("Resync restarted (-want +got):\n%s", diff)
	}
	want = append(want, "fleet.a.rollout.completed 2", "fleet.a.rollout.completed 3")
	hubHas(t, f, want)
}

// record publishes a member's outcome n to its own stream; the member's
// JetStream acknowledges it whether or not the hub is there.
func record(t *testing.T, js jetstream.JetStream, cluster string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := js.Publish(ctx, fleetnet.RolloutSubject(cluster, "rollout.completed"), []byte(fmt.Sprint(n)),
		jetstream.WithMsgID(fmt.Sprintf("%s-%d", cluster, n)), jetstream.WithExpectStream(fleetnet.OutStream))
	if err != nil {
		t.Fatalf("member %s records outcome %d: %v", cluster, n, err)
	}
}

// hubHas waits until the hub's stream holds want (subject and data of
// each message, in the order of each member's) and nothing else.
func hubHas(t *testing.T, f *fleet, want []string) {
	t.Helper()
	hub := js(t, f.hubConn())
	var got []string
	eventually(t, fmt.Sprintf("%d messages in the hub's stream", len(want)), func() bool {
		got = hubMessages(t, hub)
		return len(got) >= len(want)
	})
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Fatalf("the hub's %s (-want +got):\n%s", fleetnet.HubStream, diff)
	}
}

// hubMessages are the subject and data of every message in the hub's
// stream.
func hubMessages(t *testing.T, hub jetstream.JetStream) []string {
	t.Helper()
	return streamMessages(t, hub, fleetnet.HubStream)
}

// streamMessages are the subject and data of every message in stream.
func streamMessages(t *testing.T, js jetstream.JetStream, stream string) []string {
	t.Helper()
	s, err := js.Stream(t.Context(), stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(t.Context(), seq)
		if err != nil {
			t.Fatalf("%s's message %d: %v", stream, seq, err)
		}
		got = append(got, m.Subject+" "+string(m.Data))
	}
	return got
}
