package fleetworld_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
	"github.com/inplace-dev/inplace/test/kubelet"
	"github.com/inplace-dev/inplace/test/stack"
	"github.com/inplace-dev/inplace/test/world"
)

// TestAFleetOfThree: three clusters start, each with its own API server
// and nodes; a push published once at the hub lands in every member's
// FLEET_IN; a member's rollout outcome on its own bus reaches the hub's
// FLEET; a member cut off from the hub records its outcome and it reaches
// the hub when the link heals; so does one recorded while the hub is
// down, after the hub restarts; inplace on a member (stack.Options.Member,
// --fleet-member) puts a push the hub released to it on its own bus.
func TestAFleetOfThree(t *testing.T) {
	ctx := t.Context()
	f := startFleet(t)

	var names []string
	for _, m := range f.Members {
		names = append(names, m.Name)
		nodes, err := m.World.Client().CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil || len(nodes.Items) != 1 {
			t.Fatalf("member %s: nodes %v, %v; want its own 1", m.Name, nodes, err)
		}
	}
	if diff := cmp.Diff([]string{"staging", "prod-eu", "prod-us"}, names); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}

	hub := conn(t, f.HubConn)
	if err := hub.Publish(fleetnet.PushSubject, []byte("push-1")); err != nil {
		t.Fatal(err)
	}
	for _, m := range f.Members {
		waitStream(t, conn(t, m.Conn), fleetnet.InStream, []string{"fleet.push push-1"})
	}

	var want []string
	report := func(m *world.Member, id string) {
		t.Helper()
		b, err := bus.Connect(ctx, conn(t, m.Conn), bus.DefaultConfig(), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		e, err := events.New(id, events.RolloutCompleted, events.Source("test"), "Deployment/ns/web", id)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Publish(ctx, e); err != nil {
			t.Fatalf("member %s records %s: %v", m.Name, id, err)
		}
		want = append(want, "fleet."+m.Name+".rollout.completed \""+id+"\"")
	}
	report(f.Member("staging"), "s-1")
	waitStream(t, hub, fleetnet.HubStream, want)

	if err := f.Cut(ctx, "prod-us"); err != nil {
		t.Fatal(err)
	}
	report(f.Member("prod-us"), "us-1")
	if err := f.Heal(ctx, "prod-us"); err != nil {
		t.Fatal(err)
	}
	waitStream(t, hub, fleetnet.HubStream, want)

	f.StopHub()
	report(f.Member("prod-eu"), "eu-1")
	if err := f.StartHub(ctx); err != nil {
		t.Fatal(err)
	}
	waitStream(t, conn(t, f.HubConn), fleetnet.HubStream, want)

	// inplace on staging, as a fleet member, runs the push the hub
	// releases to it.
	staging := f.Member("staging")
	s, err := stack.Start(ctx, staging.World, stack.Options{Dir: t.TempDir(), Member: staging})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	push, err := events.New("push-2", events.ImagePushed, events.Source("test"), f.Registry.Host()+"/ns/app:1.1",
		map[string]string{"tag": "1.1"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := bus.Encode(ctx, fleetnet.PromotePush("staging"), push)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn(t, f.HubConn).PublishMsg(m); err != nil {
		t.Fatal(err)
	}
	onStaging := conn(t, staging.Conn)
	err = world.Eventually(ctx, 20*time.Second, "the release on staging's bus", func(ctx context.Context) (bool, error) {
		js, err := jetstream.New(onStaging)
		if err != nil {
			return false, err
		}
		st, err := js.Stream(ctx, bus.DefaultConfig().Stream)
		if err != nil {
			return false, err
		}
		got, err := st.GetLastMsgForSubject(ctx, bus.DefaultConfig().Subject(events.ImagePushed))
		return err == nil && got.Header.Get(nats.MsgIdHdr) == "push-2", err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func conn(t *testing.T, dial func(string) (*nats.Conn, error)) *nats.Conn {
	t.Helper()
	nc, err := dial(busauth.Operator)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// startFleet starts the three-cluster fleet, one simulated node each,
// stopped when the test ends; with -short the test is skipped.
func startFleet(t *testing.T) *world.Fleet {
	t.Helper()
	if testing.Short() {
		t.Skip("starts three control planes; skipped with -short")
	}
	t0 := time.Now()
	f, err := world.StartFleet(t.Context(), world.FleetOptions{World: world.Options{KubeletOptions: kubelet.Options{Nodes: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Stop() })
	t.Logf("fleet of %d started in %s", len(f.Members), time.Since(t0).Round(time.Millisecond))
	return f
}

// waitStream waits until stream holds want (subject and data of each
// message, in order) and fails if it holds anything else.
func waitStream(t *testing.T, nc *nats.Conn, stream string, want []string) {
	t.Helper()
	waitStreamAs(t, nc, stream, want, func(m *jetstream.RawStreamMsg) string { return string(m.Data) })
}

// waitStreamIDs is waitStream by each message's CloudEvent id.
func waitStreamIDs(t *testing.T, nc *nats.Conn, stream string, want []string) {
	t.Helper()
	waitStreamAs(t, nc, stream, want, func(m *jetstream.RawStreamMsg) string { return m.Header.Get("ce-id") })
}

// waitStreamAs waits until stream holds want (each message's subject and
// what show says of it, in order) and fails if it holds anything else.
func waitStreamAs(t *testing.T, nc *nats.Conn, stream string, want []string, show func(*jetstream.RawStreamMsg) string) {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = world.Eventually(t.Context(), 20*time.Second, stream+" holding "+want[len(want)-1], func(ctx context.Context) (bool, error) {
		got, err = messages(ctx, js, stream, show)
		return len(got) >= len(want), err
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("stream %s (-want +got):\n%s\n%v", stream, diff, err)
	}
}

func messages(ctx context.Context, js jetstream.JetStream, stream string, show func(*jetstream.RawStreamMsg) string) ([]string, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, err
	}
	var got []string
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			return nil, err
		}
		got = append(got, m.Subject+" "+show(m))
	}
	return got, nil
}
