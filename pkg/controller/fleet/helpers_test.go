package fleet

import (
	"context"
	"log/slog"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/embednats"
	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
	core "github.com/inplace-dev/inplace/pkg/core/fleet"
	"github.com/inplace-dev/inplace/test/world"
)

var web = events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web"}

func policy() core.Policy {
	return core.Policy{Workloads: []string{web.String()}, Stages: []core.Stage{
		{Name: "staging", Clusters: []string{"staging"}},
		{Name: "prod", Clusters: []string{"prod-eu", "prod-us"}},
	}}
}

// hub is a real NATS server with the fleet bucket, a stream standing for
// the members' inboxes (fleet.*.promote.>) and one for their reports.
type hub struct {
	t       *testing.T
	nc      *nats.Conn
	js      jetstream.JetStream
	store   *Store
	inbox   jetstream.Stream
	reports jetstream.Stream
}

func newHub(t *testing.T) *hub {
	t.Helper()
	s, err := embednats.Start(embednats.Options{DataDir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	nc, err := s.Connect("fleet-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	h := &hub{t: t, nc: nc}
	if h.js, err = jetstream.New(nc); err != nil {
		t.Fatal(err)
	}
	cfg := bus.DefaultConfig()
	cfg.KVBucket = Bucket
	kv, err := bus.OpenKV(t.Context(), nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.store = NewStore(kv)
	h.inbox = h.promotions()
	h.reports = h.stream("FLEET", ReportSubjects)
	return h
}

func (h *hub) stream(name, subject string) jetstream.Stream {
	h.t.Helper()
	s, err := h.js.CreateStream(h.t.Context(), jetstream.StreamConfig{Name: name, Subjects: []string{subject},
		Duplicates: time.Minute})
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// promotions makes the hub's stream of releases.
func (h *hub) promotions() jetstream.Stream {
	h.t.Helper()
	s, err := h.js.CreateStream(h.t.Context(), fleetnet.PromoteStreamConfig())
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// start runs a controller on the hub until the returned stop is called.
func (h *hub) start() (*Controller, func()) {
	h.t.Helper()
	return h.startWith(StreamPublisher(h.js))
}

// startWith runs a controller that releases through rel.
func (h *hub) startWith(rel Releaser) (*Controller, func()) {
	h.t.Helper()
	c, err := New(Options{Store: h.store, Policy: policy(), Log: slog.New(slog.DiscardHandler), Release: rel})
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(h.t.Context())
	done := make(chan struct{}, 2)
	go func() { _ = c.Run(ctx); done <- struct{}{} }()
	go func() { _ = c.Consume(ctx, h.reports, "fleet-controller"); done <- struct{}{} }()
	stop := func() { cancel(); <-done; <-done }
	h.t.Cleanup(func() {
		if ctx.Err() == nil {
			stop()
		}
	})
	return c, stop
}

func push(t *testing.T) cloudevents.Event {
	t.Helper()
	d := events.ImagePushedData{Registry: "reg.example", Repository: "shop/web", Tag: "2.0.0", Origin: "manual"}
	e, err := events.New("push-1", events.ImagePushed, events.Source("receiver"), d.Ref(), d)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// report publishes a member's rollout outcome on subject's cluster.
func (h *hub) report(cluster, id, typ string, at time.Time, counts events.Counts) {
	h.t.Helper()
	d := events.RolloutData{UpgradeID: events.DeriveUpgradeID("push-1", web), Workload: web,
		Target: "reg.example/shop/web:2.0.0", Counts: counts}
	e, err := events.New(id, typ, events.Source("compute-spec"), web.String(), d)
	if err != nil {
		h.t.Fatal(err)
	}
	e.SetTime(at)
	m, err := bus.Encode(h.t.Context(), "fleet."+cluster+"."+events.Short(typ), e)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.js.PublishMsg(h.t.Context(), m); err != nil {
		h.t.Fatal(err)
	}
}

// sent is how many pushes the members' inbox holds for cluster.
func (h *hub) sent(cluster string) int {
	h.t.Helper()
	info, err := h.inbox.Info(h.t.Context(), jetstream.WithSubjectFilter(PromoteSubject(cluster)))
	if err != nil {
		h.t.Fatal(err)
	}
	return int(info.State.Subjects[PromoteSubject(cluster)])
}

// until waits for cond on the record of push-1.
func (h *hub) until(what string, cond func(r *core.Record) bool) *core.Record {
	h.t.Helper()
	var r *core.Record
	err := world.Eventually(h.t.Context(), 10*time.Second, what, func(ctx context.Context) (bool, error) {
		var err error
		r, err = h.store.Get(ctx, "push-1")
		return r != nil && cond(r), err
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

func released(stage string) func(*core.Record) bool {
	return func(r *core.Record) bool { _, ok := r.Released[stage]; return ok }
}
