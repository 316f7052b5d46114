package busauth_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
)

const natsDir = "../../../config/nats"

// TestShippedAccountIsTheRoles: config/nats/inplace-account.conf is what
// ServerConfig writes for the default bus, so the cluster of config/nats
// enforces the same permissions as the embedded server.
func TestShippedAccountIsTheRoles(t *testing.T) {
	got, err := os.ReadFile(filepath.Join(natsDir, "inplace-account.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if want := busauth.ServerConfig(bus.DefaultConfig(), nil); string(got) != want {
		t.Errorf("config/nats/inplace-account.conf is out of date; write it with `inplace nats credentials DIR --server-config` "+
			"(keys as $INPLACE_NKEY_* variables):\n%s", want)
	}
}

// TestShippedNATSConfigConfines runs a real nats-server on config/nats's
// nats.conf (its cluster routes, ports and paths made local), the keys of
// fresh identities in the environment as the Secret would put them: each
// identity is confined as on the embedded server, and a client without
// credentials (the Broker's channel) lands in another account, where
// inplace's stream does not exist and its publishes reach nothing.
func TestShippedNATSConfigConfines(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	keys, err := busauth.Ensure(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, key := range keys {
		t.Setenv(busauth.KeyVar(name), key)
	}
	t.Setenv("SERVER_NAME", "nats-0")
	for _, f := range []string{"nats.conf", "inplace-account.conf"} {
		b, err := os.ReadFile(filepath.Join(natsDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	opts, err := natsserver.ProcessConfigFile(filepath.Join(tmp, "nats.conf"))
	if err != nil {
		t.Fatalf("config/nats/nats.conf: %v", err)
	}
	opts.Host, opts.Port, opts.HTTPPort, opts.StoreDir, opts.PidFile = "127.0.0.1", -1, 0, t.TempDir(), ""
	opts.Cluster, opts.Routes, opts.NoSigs, opts.NoLog = natsserver.ClusterOpts{}, nil, true, true
	ns, err := natsserver.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	s := server{url: ns.ClientURL(), dir: dir, cfg: bus.DefaultConfig()}
	s.cfg.Replicas = 1
	s.setup(t)
	confined(t, s)

	anon, err := nats.Connect(s.url)
	if err != nil {
		t.Fatalf("a client without credentials: %v", err)
	}
	defer anon.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	op, err := bus.Attach(ctx, s.conn(t, busauth.Operator), s.cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := lastSeq(t, op)
	if _, err := bus.Attach(ctx, anon, s.cfg, nil); err == nil {
		t.Error("a client without credentials sees inplace's stream")
	}
	if err := anon.Publish(s.cfg.Subject("dev.inplace.image.pushed.v1"), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if err := anon.Flush(); err != nil {
		t.Fatal(err)
	}
	if after := lastSeq(t, op); after != before {
		t.Errorf("a publish without credentials reached inplace's stream (%d → %d)", before, after)
	}
}
