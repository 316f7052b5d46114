package receiver

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v3"

	"github.com/inplace-dev/inplace/pkg/inputs/registry"
)

// testIssuer is a local OpenID provider: discovery document and JWKS over
// HTTP on 127.0.0.1, RSA keys made for the test.
type testIssuer struct {
	url string
	key *rsa.PrivateKey
}

const (
	testAudience = "https://inplace.example.com/hooks/gar"
	testEmail    = "gcr-push@my-project.iam.gserviceaccount.com"
)

func newIssuer(t *testing.T) *testIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": srv.URL, "jwks_uri": srv.URL + "/keys",
			"authorization_endpoint":                srv.URL + "/auth",
			"id_token_signing_alg_values_supported": []string{"RS256"},
			"response_types_supported":              []string{"id_token"},
			"subject_types_supported":               []string{"public"},
		})
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
			{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"},
		}})
	})
	return &testIssuer{url: srv.URL, key: key}
}

// claims are those of a Pub/Sub push token for the test audience.
func (i *testIssuer) claims() map[string]any {
	now := time.Now()
	return map[string]any{
		"iss": i.url, "aud": testAudience, "sub": "1234567890",
		"email": testEmail, "email_verified": true,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}
}

// sign makes a JWT of claims signed by key under the issuer's key id.
func (i *testIssuer) sign(t *testing.T, claims map[string]any, key *rsa.PrivateKey) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1")
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (i *testIssuer) auth() *Auth {
	return &Auth{Type: AuthOIDC, Issuer: i.url, Audience: testAudience, Email: testEmail}
}

func TestOIDC(t *testing.T) {
	iss := newIssuer(t)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	with := func(k string, v any) map[string]any { c := iss.claims(); c[k] = v; return c }
	tests := []struct {
		name   string
		header string
		want   int
	}{
		{"good token", "Bearer " + iss.sign(t, iss.claims(), iss.key), http.StatusAccepted},
		{"no Authorization", "", http.StatusUnauthorized},
		{"not a bearer token", "Basic " + iss.sign(t, iss.claims(), iss.key), http.StatusUnauthorized},
		{"garbage", "Bearer not.a.jwt", http.StatusUnauthorized},
		{"wrong audience", "Bearer " + iss.sign(t, with("aud", "https://elsewhere.example.com"), iss.key), http.StatusUnauthorized},
		{"wrong issuer", "Bearer " + iss.sign(t, with("iss", "https://accounts.example.com"), iss.key), http.StatusUnauthorized},
		{"expired", "Bearer " + iss.sign(t, with("exp", time.Now().Add(-time.Hour).Unix()), iss.key), http.StatusUnauthorized},
		{"bad signature", "Bearer " + iss.sign(t, iss.claims(), other), http.StatusUnauthorized},
		{"other service account", "Bearer " + iss.sign(t, with("email", "someone@example.com"), iss.key), http.StatusUnauthorized},
		{"email not verified", "Bearer " + iss.sign(t, with("email_verified", false), iss.key), http.StatusUnauthorized},
	}
	g := loadGolden(t, registry.GAR, "docs_insert_full_digest")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, pub, _ := newTest(t, Config{Routes: []Route{{Name: "gar", Format: registry.GAR, Auth: iss.auth()}}})
			hdr := http.Header{}
			if tt.header != "" {
				hdr.Set("Authorization", tt.header)
			}
			w := post(t, h, "/hooks/gar", hdr, g.body)
			if w.Code != tt.want {
				t.Fatalf("status %d (%s); want %d", w.Code, w.Body, tt.want)
			}
			if n := len(pub.published()); (n > 0) != (tt.want == http.StatusAccepted) {
				t.Errorf("published %d events", n)
			}
		})
	}
}

func TestOIDCIssuerUnreachableIs503(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close() // nothing listens there any more
	a := &Auth{Type: AuthOIDC, Issuer: srv.URL, Audience: testAudience}
	h, _, _ := newTest(t, Config{Routes: []Route{{Name: "gar", Format: registry.GAR, Auth: a}}})
	hdr := http.Header{"Authorization": {"Bearer x.y.z"}}
	if w := post(t, h, "/hooks/gar", hdr, []byte(`{}`)); w.Code != http.StatusServiceUnavailable {
		t.Fatalf("status %d (%s); want 503 so that Pub/Sub retries", w.Code, w.Body)
	}
}

func TestOIDCWithJWKSURL(t *testing.T) {
	iss := newIssuer(t)
	a := iss.auth()
	a.JWKSURL = iss.url + "/keys"
	h, _, _ := newTest(t, Config{Routes: []Route{{Name: "gar", Format: registry.GAR, Auth: a}}})
	g := loadGolden(t, registry.GAR, "docs_insert_full_digest")
	hdr := http.Header{"Authorization": {"Bearer " + iss.sign(t, iss.claims(), iss.key)}}
	if w := post(t, h, "/hooks/gar", hdr, g.body); w.Code != http.StatusAccepted {
		t.Fatalf("status %d (%s); want 202", w.Code, w.Body)
	}
}
