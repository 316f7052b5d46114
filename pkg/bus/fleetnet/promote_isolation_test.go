package fleetnet_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
)

// promotionLeaks probes, on a fleet of members a and b whose hub holds a
// promotion for a, what b's credentials can get of it from the hub's
// PromoteStream, and returns what got through: each try is a JetStream
// API request with a reply subject b may read (as its InStream's sourcing
// makes); an answer without an error is a leak.
func promotionLeaks(t *testing.T, f *fleet) []string {
	t.Helper()
	ctx := t.Context()
	hub := js(t, f.hubConn())
	if _, err := fleetnet.SetupHub(ctx, hub, []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	send(t, hub, fleetnet.PromotePush("a"), "for-a")

	kp, err := nkeys.FromSeed([]byte(f.seeds["b"]))
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	nc, err := f.hub.Connect("b-at-hub", nats.Nkey(pub, kp.Sign), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	replies := subscribe(t, nc, "$JSC.R.hub.*."+fleetnet.PromoteStream+".>")

	api := "$JS.hub.API."
	create := api + "CONSUMER.CREATE." + fleetnet.PromoteStream
	consumer := func(name, filter string, filters ...string) string {
		b, _ := json.Marshal(map[string]any{"stream_name": fleetnet.PromoteStream, "config": map[string]any{
			"name": name, "deliver_subject": "fleet.b.in." + name, "ack_policy": "none",
			"filter_subject": filter, "filter_subjects": filters}})
		return string(b)
	}
	tries := []struct{ what, subject, body string }{
		{"a consumer of a's promotions", create + ".spy1.fleet.a.promote.>", consumer("spy1", "fleet.a.promote.>")},
		{"a consumer of a's promotions named as b's", create + ".spy2.fleet.b.promote.>", consumer("spy2", "fleet.a.promote.>")},
		{"a consumer of a's promotions among b's", create + ".spy3.fleet.b.promote.>", consumer("spy3", "", "fleet.a.promote.>")},
		{"a consumer without a filter in its subject", create, consumer("spy4", "fleet.a.promote.>")},
		{"a's last promotion", api + "DIRECT.GET." + fleetnet.PromoteStream, `{"last_by_subj":"fleet.a.promote.push"}`},
		{"a's last promotion (message get)", api + "STREAM.MSG.GET." + fleetnet.PromoteStream, `{"last_by_subj":"fleet.a.promote.push"}`},
	}
	var got []string
	for i, try := range tries {
		reply := fmt.Sprintf("$JSC.R.hub.spy.%s.spy.%d", fleetnet.PromoteStream, i)
		if err := nc.PublishMsg(&nats.Msg{Subject: try.subject, Reply: reply, Data: []byte(try.body)}); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		got = append(got, took(replies, try.what)...)
	}
	return slices.Compact(got)
}

// took says what got through in the answers b receives within a second of
// one try.
func took(ch <-chan *nats.Msg, what string) []string {
	var got []string
	deadline := time.After(time.Second)
	for {
		select {
		case m := <-ch:
			var answer struct {
				Error *struct{ Description string } `json:"error"`
			}
			if json.Unmarshal(m.Data, &answer) == nil && answer.Error == nil {
				got = append(got, "b was answered: "+what)
			}
		case <-deadline:
			return got
		}
	}
}

// TestAMemberCannotTakeAnothersPromotions: member b's credentials at the
// hub can create no consumer of a's promotions on PromoteStream (neither
// by naming a's filter, which its permissions refuse, nor by naming its
// own in the subject and a's in the body, which the hub's server refuses)
// and cannot get a's messages from it.
func TestAMemberCannotTakeAnothersPromotions(t *testing.T) {
	f := newFleet(t, fleetnet.MemberPerms, "a", "b")
	if diff := cmp.Diff([]string(nil), promotionLeaks(t, f)); diff != "" {
		t.Errorf("what member b got of member a's promotions (-want +got):\n%s", diff)
	}
}

// TestThePromotionProbeSeesWidePermissions: with every subject allowed,
// the same probe creates consumers of a's promotions and reads a's last
// one (the test above can fail); the hub's server still refuses a
// request whose subject names another filter than its body.
func TestThePromotionProbeSeesWidePermissions(t *testing.T) {
	f := newFleet(t, wide, "a", "b")
	got := promotionLeaks(t, f)
	want := []string{"b was answered: a consumer of a's promotions", "b was answered: a consumer without a filter in its subject",
		"b was answered: a's last promotion (message get)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("with wide permissions the probe found (-want +got):\n%s", diff)
	}
}
