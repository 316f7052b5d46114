package app_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/pflag"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
	"github.com/inplace-dev/inplace/pkg/config"
	fleetctl "github.com/inplace-dev/inplace/pkg/controller/fleet"
)

// startHub runs `inplace run --fleet-hub` on an embedded NATS with its
// identities, under a policy of staging then prod-eu and prod-us.
func startHub(t *testing.T) *app.Running {
	t.Helper()
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	err := os.WriteFile(policy, []byte("workloads: [Deployment/shop/web]\nstages:\n- name: staging\n  clusters: [staging]\n"+
		"- name: prod\n  clusters: [prod-eu, prod-us]\n"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	var p config.Process
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	if err := config.BindFlags(fs, &p); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--fleet-hub", "--fleet-policy", policy}); err != nil {
		t.Fatal(err)
	}
	p.NATSListen, p.NATSDataDir, p.HTTPAddr = "127.0.0.1:-1", filepath.Join(dir, "nats"), "127.0.0.1:0"
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	rr, err := app.Start(ctx, &p, slog.New(slog.DiscardHandler))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = rr.Wait() })
	return rr
}

func dialAs(t *testing.T, rr *app.Running, id string) *nats.Conn {
	t.Helper()
	opts, err := busauth.Dial(rr.Credentials, id)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(rr.NATSURL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// TestFleetHubBeginsAPush: the hub process, its controller on its own
// identity (busauth.FleetHub), takes an image.pushed the receiver's
// identity publishes on the hub's bus, records it in the fleet bucket and
// releases it to staging alone; the hub's stream sources every cluster
// of the policy; the hub sets up its own consumer and none of the chain's.
func TestFleetHubBeginsAPush(t *testing.T) {
	rr := startHub(t)
	op := dialAs(t, rr, busauth.Operator)
	releases := make(chan *nats.Msg, 8)
	if _, err := op.ChanSubscribe("fleet.*.promote.push", releases); err != nil {
		t.Fatal(err)
	}
	if err := op.Flush(); err != nil {
		t.Fatal(err)
	}
	rb, err := bus.Attach(t.Context(), dialAs(t, rr, busauth.Receiver), bus.DefaultConfig(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	d := events.ImagePushedData{Registry: "reg.example", Repository: "shop/web", Tag: "2.0.0", Origin: "manual"}
	push, err := events.New("push-1", events.ImagePushed, events.Source("receiver"), d.Ref(), d)
	if err != nil {
		t.Fatal(err)
	}
	if err := rb.Publish(t.Context(), push); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-releases:
		if m.Subject != fleetnet.PromotePush("staging") || m.Header.Get("ce-id") != "push-1" {
			t.Errorf("release on %s of %q; want staging's of push-1", m.Subject, m.Header.Get("ce-id"))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no release in 20s")
	}
	js, err := jetstream.New(op)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(t.Context(), fleetctl.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(t.Context(), "push-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Value()) == 0 {
		t.Error("no fleet record of push-1")
	}
	select {
	case m := <-releases:
		t.Errorf("a release before staging is done: %s", m.Subject)
	default:
	}
	s, err := js.Stream(t.Context(), fleetnet.HubStream)
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, src := range s.CachedInfo().Config.Sources {
		sources = append(sources, src.FilterSubject)
	}
	want := []string{fleetnet.RolloutSubjects("staging"), fleetnet.RolloutSubjects("prod-eu"), fleetnet.RolloutSubjects("prod-us")}
	if diff := cmp.Diff(want, sources); diff != "" {
		t.Errorf("the hub's sources (-want +got):\n%s", diff)
	}
	inplace, err := js.Stream(t.Context(), bus.DefaultConfig().Stream)
	if err != nil {
		t.Fatal(err)
	}
	var consumers []string
	names := inplace.ConsumerNames(t.Context())
	for name := range names.Name() {
		consumers = append(consumers, name)
	}
	if !slices.Equal(consumers, []string{busauth.FleetHub}) {
		t.Errorf("consumers on the hub's bus: %v, want [%s]", consumers, busauth.FleetHub)
	}
}

// The controller's bucket is the one the hub's identity may use.
func TestFleetBucketIsTheIdentitys(t *testing.T) {
	if fleetctl.Bucket != busauth.FleetBucket {
		t.Errorf("fleet controller's bucket %q, busauth's %q", fleetctl.Bucket, busauth.FleetBucket)
	}
}
