package fleetnet_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
)

// TestAReleaseReachesAMemberThatWasCutOff: the hub stores what it sends
// (PromoteStream, acknowledged), so a release published while member a's
// leaf connection is cut reaches a's InStream once the link heals, after
// the ones a already had; member b, joined all along, has the push and
// none of a's promotions.
func TestAReleaseReachesAMemberThatWasCutOff(t *testing.T) {
	ctx := t.Context()
	f := newFleet(t, fleetnet.MemberPerms, "a", "b")
	hub := js(t, f.hubConn())
	if _, err := fleetnet.SetupHub(ctx, hub, []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"a", "b"} {
		if err := fleetnet.SetupMember(ctx, js(t, f.memberConn(c)), fleetnet.Member{Cluster: c}); err != nil {
			t.Fatal(err)
		}
	}
	send(t, hub, fleetnet.PromotePush("a"), "release-1")
	inHas(t, f, "a", []string{"fleet.a.promote.push release-1"})

	f.cut("a")
	send(t, hub, fleetnet.PromotePush("a"), "release-2")
	send(t, hub, fleetnet.PushSubject, "push-3")
	f.heal("a")
	if _, err := fleetnet.ResyncMember(ctx, js(t, f.memberConn("a"))); err != nil {
		t.Fatal(err)
	}
	inHas(t, f, "a", []string{"fleet.a.promote.push release-1", "fleet.a.promote.push release-2", "fleet.push push-3"})
	inHas(t, f, "b", []string{"fleet.push push-3"})
}

// send publishes data on subject at the hub and waits for PromoteStream's
// ack, as the hub's controller releases a push.
func send(t *testing.T, hub jetstream.JetStream, subject, data string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := hub.Publish(ctx, subject, []byte(data), jetstream.WithMsgID(data),
		jetstream.WithExpectStream(fleetnet.PromoteStream))
	if err != nil {
		t.Fatalf("the hub sends %s on %s: %v", data, subject, err)
	}
}

// inHas waits until member c's InStream holds want (subject and data of
// each message, in order of each subject: InStream takes the pushes and
// the promotions through a source each) and fails if it holds anything
// else.
func inHas(t *testing.T, f *fleet, c string, want []string) {
	t.Helper()
	m := js(t, f.memberConn(c))
	var got []string
	eventually(t, fmt.Sprintf("member %s's %s holding %d messages", c, fleetnet.InStream, len(want)), func() bool {
		got = streamMessages(t, m, fleetnet.InStream)
		return len(got) >= len(want)
	})
	bySubject := cmpopts.SortSlices(func(x, y string) bool { return strings.Fields(x)[0] < strings.Fields(y)[0] })
	if diff := cmp.Diff(want, got, bySubject); diff != "" {
		t.Fatalf("member %s's %s (-want +got):\n%s", c, fleetnet.InStream, diff)
	}
}
