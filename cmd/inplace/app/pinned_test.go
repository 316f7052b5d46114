package app_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
)

// inplace run sets up compute-spec's consumer pinned to one replica at a
// time (--pinned-ttl), and every other function's consumer unpinned.
func TestComputeSpecsConsumerIsPinned(t *testing.T) {
	p := receiverProcess(t)
	p.Bus.PinnedTTL = 7 * time.Second
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	rr, err := app.Start(ctx, p, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = rr.Wait() }()
	opts, err := busauth.Dial(p.CredentialsDir(), busauth.Operator)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(rr.NATSURL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	type pin struct {
		Policy jetstream.PriorityPolicy
		Groups []string
		TTL    time.Duration
	}
	got := map[string]pin{}
	for _, c := range app.Consumers {
		cons, err := js.Consumer(t.Context(), p.Bus.Stream, c.Name)
		if err != nil {
			t.Fatal(err)
		}
		cfg := cons.CachedInfo().Config
		got[c.Name] = pin{cfg.PriorityPolicy, cfg.PriorityGroups, cfg.PinnedTTL}
	}
	want := map[string]pin{
		"compute-spec": {jetstream.PriorityPolicyPinned, []string{"inplace"}, 7 * time.Second},
		"pre-pull":     {}, "patch-pod": {}, "verify": {},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("consumers' priority settings (-want +got):\n%s", diff)
	}
}
