package busauth_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
	"github.com/inplace-dev/inplace/pkg/bus/embednats"
)

// server is a NATS server taking the identities of a credentials directory.
type server struct {
	url string
	dir string
	cfg bus.Config
	// own, when set, is the embedded server, which conn reaches in
	// process, as `inplace run` reaches its own; without it conn dials url
	// over TCP, as another process does.
	own *embednats.Server
}

// embedded starts the embedded server as `inplace run` does: identities
// made in a fresh directory, the bus set up by the operator, connections
// in process.
func embedded(t *testing.T) server {
	t.Helper()
	dir, cfg := t.TempDir(), bus.DefaultConfig()
	keys, err := busauth.Ensure(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := embednats.Start(embednats.Options{DataDir: t.TempDir(), Port: -1, Users: busauth.EmbeddedUsers(cfg, keys)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	srv := server{url: s.URL(), dir: dir, cfg: cfg, own: s}
	srv.setup(t)
	return srv
}

// overTCP is s reached as another process reaches it.
func (s server) overTCP() server {
	s.own = nil
	return s
}

// setup makes the stream, the consumers and the buckets as the operator.
func (s server) setup(t *testing.T) {
	t.Helper()
	b, err := bus.Connect(t.Context(), s.conn(t, busauth.Operator), s.cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.EnsureConsumers(t.Context(), app.Consumers...); err != nil {
		t.Fatal(err)
	}
	if _, err := b.KV(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Failures(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Leases(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// conn connects as identity id.
func (s server) conn(t *testing.T, id string) *nats.Conn {
	t.Helper()
	opts, err := busauth.Dial(s.dir, id)
	if err != nil {
		t.Fatal(err)
	}
	opts = append(opts, nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	var nc *nats.Conn
	if s.own != nil {
		nc, err = s.own.Connect(id, opts...)
	} else {
		nc, err = nats.Connect(s.url, opts...)
	}
	if err != nil {
		t.Fatalf("connect as %s: %v", id, err)
	}
	t.Cleanup(nc.Close)
	if inProcess := nc.ConnectedAddr() == "pipe"; inProcess != (s.own != nil) {
		t.Fatalf("connected as %s at %s; want in process: %v", id, nc.ConnectedAddr(), s.own != nil)
	}
	return nc
}

// client is one identity's connection.
type client struct {
	t  *testing.T
	nc *nats.Conn
}

func (s server) client(t *testing.T, id string) *client {
	return &client{t: t, nc: s.conn(t, id)}
}

// publishes reports whether the server takes a publish on subject from c.
// The server answers a refused publish with an error that comes before its
// answer to the flush after it; the connection keeps it as its last error.
func (c *client) publishes(subject string) bool {
	c.t.Helper()
	if err := c.nc.Publish(subject, []byte("{}")); err != nil {
		c.t.Fatal(err)
	}
	return !c.refusedNow(`Publish to "` + subject + `"`)
}

// subscribes reports whether the server takes a subscription on subject.
func (c *client) subscribes(subject string) bool {
	c.t.Helper()
	sub, err := c.nc.SubscribeSync(subject)
	if err != nil {
		c.t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	return !c.refusedNow(`Subscription to "` + subject + `"`)
}

// refusedNow flushes and reports whether the server's last refusal names
// what (every check names a subject of its own).
func (c *client) refusedNow(what string) bool {
	c.t.Helper()
	if err := c.nc.Flush(); err != nil {
		c.t.Fatal(err)
	}
	err := c.nc.LastError()
	return err != nil && strings.Contains(err.Error(), what)
}

// TestEachIdentityIsConfined: a process holding one identity's credentials
// may publish its outputs and its own dead letters, pull and ack its own
// consumer, read (compute-spec: write) the rollout records, count its own
// failures and subscribe to its own inbox; the server refuses it every
// other event subject, another function's consumer, a consumer of its own
// making on the stream (which would read every event), reading the stream
// directly, another's failure counts, the rollout records (but for
// compute-spec), another's inbox and the whole stream's subjects; alike
// in process (the process's own connections to its embedded server) and
// over TCP (another process's).
func TestEachIdentityIsConfined(t *testing.T) {
	s := embedded(t)
	t.Run("in-process", func(t *testing.T) { confined(t, s) })
	t.Run("tcp", func(t *testing.T) { confined(t, s.overTCP()) })
}

func confined(t *testing.T, s server) {
	cfg := s.cfg
	api := "$JS.API."
	others := func(id string) string { // a function that is not id
		if id == busauth.Verify {
			return busauth.PatchPod
		}
		return busauth.Verify
	}
	for _, r := range busauth.Roles() {
		if r.All {
			continue
		}
		t.Run(r.Name, func(t *testing.T) {
			c := s.client(t, r.Name)
			for _, typ := range append(events.Types, events.CDServiceUpgraded, events.CDServiceRolledBack) {
				want := contains(r.Publishes, typ)
				if got := c.publishes(cfg.Subject(typ)); got != want {
					t.Errorf("publish %s: allowed %v; want %v", events.Short(typ), got, want)
				}
			}
			other := others(r.Name)
			mine := r.Consumer
			checks := []struct {
				what    string
				subject string
				want    bool
			}{
				{"pull its own consumer", api + "CONSUMER.MSG.NEXT." + cfg.Stream + "." + r.Name, mine},
				{"ack its own messages", "$JS.ACK." + cfg.Stream + "." + r.Name + ".1.1.1.1.1.0", mine},
				{"dead-letter its own", cfg.DLQSubject(r.Name), mine},
				{"count its own failures", "$KV." + cfg.FailuresBucket() + "." + r.Name + ".7", mine},
				{"pull another's consumer", api + "CONSUMER.MSG.NEXT." + cfg.Stream + "." + other, false},
				{"ack another's messages", "$JS.ACK." + cfg.Stream + "." + other + ".1.1.1.1.1.0", false},
				{"dead-letter as another", cfg.DLQSubject(other), false},
				{"count another's failures", "$KV." + cfg.FailuresBucket() + "." + other + ".7", false},
				{"take its own lease", "$KV." + cfg.LeasesBucket() + "." + bus.LeaderKey(r.Name), r.Consumer || r.Leases},
				{"take another's lease", "$KV." + cfg.LeasesBucket() + "." + bus.LeaderKey(other), false},
				{"make a consumer on the stream", api + "CONSUMER.CREATE." + cfg.Stream + ".spy", false},
				{"make an ephemeral consumer", api + "CONSUMER.CREATE." + cfg.Stream, false},
				{"read the stream directly", api + "DIRECT.GET." + cfg.Stream, false},
				{"read a stream message", api + "STREAM.MSG.GET." + cfg.Stream, false},
				{"delete the stream", api + "STREAM.DELETE." + cfg.Stream, false},
				{"purge the stream", api + "STREAM.PURGE." + cfg.Stream, false},
				{"read a rollout record", api + "DIRECT.GET.KV_" + cfg.KVBucket + ".$KV." + cfg.KVBucket + ".Deployment/a/b", r.Rollouts != busauth.None},
				{"write a rollout record", "$KV." + cfg.KVBucket + ".x", r.Rollouts == busauth.Write},
				{"publish on a raw subject", "inplace.anything", false},
			}
			for _, ck := range checks {
				if got := c.publishes(ck.subject); got != ck.want {
					t.Errorf("%s (%s): allowed %v; want %v", ck.what, ck.subject, got, ck.want)
				}
			}
			subs := []struct {
				subject string
				want    bool
			}{
				{busauth.InboxPrefix(r.Name) + ".x", true},
				{cfg.AllSubjects(), false},
				{"_INBOX.>", false},
				{busauth.InboxPrefix(other) + ".>", false},
				{">", false},
			}
			for _, sb := range subs {
				if got := c.subscribes(sb.subject); got != sb.want {
					t.Errorf("subscribe %s: allowed %v; want %v", sb.subject, got, sb.want)
				}
			}
		})
	}
}

// TestAFunctionWorksAsItself: as its own identity, a function binds to the
// bus, pulls and acks what is for it, publishes its output, reads the
// rollout records; a forged publish through JetStream stores nothing.
func TestAFunctionWorksAsItself(t *testing.T) {
	s := embedded(t)
	ctx := t.Context()
	log := slog.New(slog.DiscardHandler)
	op, err := bus.Connect(ctx, s.conn(t, busauth.Operator), s.cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	pp, err := bus.Attach(ctx, s.conn(t, busauth.PatchPod), s.cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	in := event(t, "in-1", events.ImagePrepulled)
	if err := op.Publish(ctx, in); err != nil {
		t.Fatal(err)
	}
	if err := pp.EnsureConsumers(ctx, bus.ConsumerSpec{Name: busauth.PatchPod}); err != nil {
		t.Fatalf("patch-pod finds its consumer: %v", err)
	}
	c, err := pp.Consumer(ctx, busauth.PatchPod)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := c.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for m := range batch.Messages() {
		n++
		if err := m.DoubleAck(ctx); err != nil {
			t.Errorf("ack: %v", err)
		}
	}
	if n != 1 {
		t.Fatalf("patch-pod pulled %d messages; want its input", n)
	}
	if err := pp.Publish(ctx, event(t, "out-1", events.PodPatched)); err != nil {
		t.Errorf("publish its output: %v", err)
	}
	kv, err := pp.KV(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := kv.Get(ctx, "Deployment/a/b"); err != nil {
		t.Errorf("read a rollout record: %v", err)
	}
	before := lastSeq(t, op)
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := pp.Publish(short, event(t, "forged", events.ImagePushed)); err == nil {
		t.Error("patch-pod published an image.pushed")
	}
	if _, err := kv.Update(short, "Deployment/a/b", func([]byte) ([]byte, error) { return []byte("{}"), nil }); err == nil {
		t.Error("patch-pod wrote a rollout record")
	}
	if after := lastSeq(t, op); after != before {
		t.Errorf("the stream moved from %d to %d", before, after)
	}
}

func event(t *testing.T, id, typ string) cloudevents.Event {
	t.Helper()
	e, err := events.New(id, typ, events.Source("test"), "ns/pod", map[string]string{"x": "y"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func lastSeq(t *testing.T, b *bus.Bus) uint64 {
	t.Helper()
	s, err := b.JetStream().Stream(t.Context(), b.Config().Stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.LastSeq
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestComputeSpecKeepsTheRecords: compute-spec, as itself, writes and
// lists the rollout records (its watchdog walks them) and counts its
// failed deliveries.
func TestComputeSpecKeepsTheRecords(t *testing.T) {
	s := embedded(t)
	ctx := t.Context()
	cs, err := bus.Attach(ctx, s.conn(t, busauth.ComputeSpec), s.cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	kv, err := cs.KV(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Update(ctx, "Deployment/a/b", func([]byte) ([]byte, error) { return []byte("{}"), nil }); err != nil {
		t.Fatalf("write a record: %v", err)
	}
	keys, err := kv.Keys(ctx)
	if err != nil || len(keys) != 1 {
		t.Fatalf("list the records: %v, %v", keys, err)
	}
	f, err := cs.Failures(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.Add(ctx, busauth.ComputeSpec, 7); err != nil || n != 1 {
		t.Errorf("count a failure: %d, %v", n, err)
	}
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := f.Add(short, busauth.Verify, 7); err == nil {
		t.Error("compute-spec counted a failure of verify's")
	}
}

// TestTheLeadersLeadAsThemselves: as its own identity, each singleton
// finds the lease bucket and takes its leader lease (one replica does its
// work: bus.Leader): the pod watcher (one replica publishes) and pre-pull
// (one replica warms the rollouts). TestEachIdentityIsConfined checks that
// neither may take another's.
func TestTheLeadersLeadAsThemselves(t *testing.T) {
	s := embedded(t)
	for _, id := range []string{busauth.PodWatcher, busauth.PrePull} {
		t.Run(id, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			b, err := bus.Attach(ctx, s.conn(t, id), s.cfg, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			leases, err := b.Leases(ctx)
			if err != nil {
				t.Fatalf("%s finds the lease bucket: %v", id, err)
			}
			led := make(chan struct{})
			go bus.Leader{Leases: leases, Name: id}.Run(ctx, func(context.Context) { close(led); cancel() })
			select {
			case <-led:
			case <-ctx.Done():
				t.Fatalf("%s never took its leader lease", id)
			}
		})
	}
}
