package manifests_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats-server/v2/server"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	brokerconfig "knative.dev/eventing/pkg/reconciler/broker"

	"github.com/inplace-dev/inplace/pkg/bus/busauth"
	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/inputs/receiver"
)

// configMap finds and converts a ConfigMap of an overlay.
func configMap(t *testing.T, overlay, prefix string) *corev1.ConfigMap {
	t.Helper()
	for _, o := range render(t, filepath.Join(root(t), "config", "overlays", overlay)) {
		if o.GetKind() != "ConfigMap" || len(o.GetName()) < len(prefix) || o.GetName()[:len(prefix)] != prefix {
			continue
		}
		var cm corev1.ConfigMap
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &cm); err != nil {
			t.Fatal(err)
		}
		return &cm
	}
	t.Fatalf("overlay %s has no ConfigMap %s*", overlay, prefix)
	return nil
}

// TestNATSConfig parses the cluster's nats.conf with nats-server itself,
// as a server of the StatefulSet would read it.
func TestNATSConfig(t *testing.T) {
	cm := configMap(t, "nats", "nats-config-")
	dir := t.TempDir()
	path := filepath.Join(dir, "nats.conf")
	for _, f := range []string{"nats.conf", "inplace-account.conf"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(cm.Data[f]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("SERVER_NAME", "nats-1")
	keys, err := busauth.Ensure(t.TempDir()) // the Secret nats-inplace-identities
	if err != nil {
		t.Fatal(err)
	}
	for name, key := range keys {
		t.Setenv(busauth.KeyVar(name), key)
	}
	o, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("nats-server rejects nats.conf: %v", err)
	}
	var routes []string
	for _, u := range o.Routes {
		routes = append(routes, u.Host)
	}
	got := map[string]any{"server": o.ServerName, "jetstream": o.JetStream, "store": o.StoreDir,
		"cluster": o.Cluster.Name, "routes": routes, "port": o.Port, "monitor": o.HTTPPort,
		"identities": len(o.Nkeys), "anonymous": o.NoAuthUser}
	want := map[string]any{"server": "nats-1", "jetstream": true, "store": "/data", "cluster": "inplace",
		"identities": len(busauth.Roles()), "anonymous": "knative",
		"routes": []string{
			"nats-0.nats-headless.inplace-system.svc.cluster.local:6222",
			"nats-1.nats-headless.inplace-system.svc.cluster.local:6222",
			"nats-2.nats-headless.inplace-system.svc.cluster.local:6222",
		}, "port": 4222, "monitor": 8222}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("nats.conf (-want +got):\n%s", diff)
	}
}

// TestReceiverRoutes loads the receiver's route file as the receiver does.
func TestReceiverRoutes(t *testing.T) {
	for _, overlay := range []string{"plain", "knative"} {
		t.Run(overlay, func(t *testing.T) {
			cm := configMap(t, overlay, "inplace-hooks")
			path := filepath.Join(t.TempDir(), "receiver.yaml")
			if err := os.WriteFile(path, []byte(cm.Data["receiver.yaml"]), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := receiver.LoadConfig(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			if len(cfg.Routes) == 0 {
				t.Fatal("no route")
			}
		})
	}
}

// TestBrokerChannel reads the Broker's channel ConfigMap with Knative
// Eventing's own parser (the MT channel-based broker's).
func TestBrokerChannel(t *testing.T) {
	cm := configMap(t, "knative", "inplace-broker-channel")
	c, err := brokerconfig.NewConfigFromConfigMapFunc(context.Background())(cm)
	if err != nil {
		t.Fatal(err)
	}
	got := c.DefaultChannelTemplate.TypeMeta
	if got.APIVersion != "messaging.knative.dev/v1alpha1" || got.Kind != "NatsJetStreamChannel" {
		t.Errorf("channel template %s %s, want messaging.knative.dev/v1alpha1 NatsJetStreamChannel", got.APIVersion, got.Kind)
	}
}

// TestConfigInplace parses config-inplace with the functions' parser.
func TestConfigInplace(t *testing.T) {
	cm := configMap(t, "plain", "config-inplace")
	if _, err := config.ParseDefaults(cm.Data); err != nil {
		t.Fatal(err)
	}
}
