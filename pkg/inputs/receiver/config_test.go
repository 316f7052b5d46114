package receiver

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLoadConfigExample(t *testing.T) {
	t.Setenv("INPLACE_TEST_REGISTRY_TOKEN", "registry-token")
	cfg, err := LoadConfig("testdata/receiver.yaml")
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	var names []string
	for _, r := range cfg.Routes {
		names = append(names, r.Name+"="+string(r.Format)+"/"+r.Auth.Type)
	}
	want := []string{"dockerhub=dockerhub/urltoken", "registry=distribution/token", "harbor=harbor/token",
		"ghcr=ghcr/hmac", "gar=gar/oidc", "ci=generic/none"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("routes (-want +got):\n%s", diff)
	}
	if cfg.PublishTimeout.Duration != 10*time.Second {
		t.Errorf("publishTimeout = %v", cfg.PublishTimeout)
	}
	h, _, _ := newTest(t, cfg)
	if got := h.routes["dockerhub"].auth.(urlTokenAuth).want; got != sum("hub-token-0123456789") {
		t.Error("the secret file's trailing newline was kept")
	}
	if got := h.routes["registry"].auth.(tokenAuth).want; got != sum("Bearer registry-token") {
		t.Error("env secret with prefix not resolved")
	}
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	token := &Auth{Type: AuthToken, Secret: &Secret{Value: "x"}}
	tests := []struct {
		name string
		cfg  Config
		key  string
	}{
		{"no routes", Config{}, "routes"},
		{"unknown format", Config{Routes: []Route{{Name: "a", Format: "nexus", Auth: token}}}, "routes[0].format"},
		{"auth omitted", Config{Routes: []Route{{Name: "a", Format: "harbor"}}}, "routes[0].auth"},
		{"auth type empty", Config{Routes: []Route{{Name: "a", Format: "harbor", Auth: &Auth{}}}}, "routes[0].auth.type"},
		{"unknown auth type", Config{Routes: []Route{{Name: "a", Format: "harbor", Auth: &Auth{Type: "basic"}}}}, "routes[0].auth.type"},
		{"missing secret", Config{Routes: []Route{{Name: "a", Format: "harbor", Auth: &Auth{Type: AuthToken}}}}, "routes[0].auth.secret"},
		{"two secrets", Config{Routes: []Route{{Name: "a", Format: "harbor", Auth: &Auth{Type: AuthToken, Secret: &Secret{Value: "x", Env: "Y"}}}}}, "routes[0].auth.secret"},
		{"hmac on a registry that cannot sign", Config{Routes: []Route{{Name: "a", Format: "dockerhub", Auth: &Auth{Type: AuthHMAC, Secret: &Secret{Value: "x"}}}}}, "routes[0].auth.type"},
		{"oidc without audience", Config{Routes: []Route{{Name: "a", Format: "gar", Auth: &Auth{Type: AuthOIDC, Issuer: "https://accounts.google.com"}}}}, "routes[0].auth.audience"},
		{"none with a secret", Config{Routes: []Route{{Name: "a", Format: "generic", Auth: &Auth{Type: AuthNone, Secret: &Secret{Value: "x"}}}}}, "routes[0].auth.secret"},
		{"bad name", Config{Routes: []Route{{Name: "Hooks/A", Format: "harbor", Auth: token}}}, "routes[0].name"},
		{"duplicate name", Config{Routes: []Route{{Name: "a", Format: "harbor", Auth: token}, {Name: "a", Format: "acr", Auth: token}}}, "routes[1].name"},
		{"body limit", Config{Routes: []Route{{Name: "a", Format: "harbor", Auth: token, BodyLimit: 1 << 30}}}, "routes[0].bodyLimit"},
		{"rate limit", Config{Routes: []Route{{Name: "a", Format: "harbor", Auth: token, RateLimit: &RateLimit{}}}}, "routes[0].rateLimit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			var ke *KeyError
			if !errors.As(err, &ke) {
				t.Fatalf("Validate() = %v; want a KeyError", err)
			}
			if ke.Key != tt.key {
				t.Errorf("key = %q (%v); want %q", ke.Key, err, tt.key)
			}
		})
	}
}

func TestNewFailsOnUnreadableSecrets(t *testing.T) {
	t.Setenv("INPLACE_TEST_EMPTY", "")
	tests := []struct {
		name   string
		secret Secret
		key    string
	}{
		{"missing file", Secret{File: filepath.Join(t.TempDir(), "nope")}, "routes[0].auth.secret.file"},
		{"empty env", Secret{Env: "INPLACE_TEST_EMPTY"}, "routes[0].auth.secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Routes: []Route{{Name: "a", Format: "harbor", Auth: &Auth{Type: AuthToken, Secret: &tt.secret}}}}
			_, err := New(cfg, &recorder{}, Options{})
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Key != tt.key {
				t.Fatalf("New() = %v; want a KeyError on %s", err, tt.key)
			}
		})
	}
}

func TestLoadConfigRejectsUnknownKeys(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.yaml")
	yaml := "routes:\n  - name: a\n    format: harbor\n    auth: {type: none}\n    bodylimt: 10\n"
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(p)
	if err == nil || !strings.Contains(err.Error(), "bodylimt") {
		t.Fatalf("LoadConfig() = %v; want an error naming bodylimt", err)
	}
}
