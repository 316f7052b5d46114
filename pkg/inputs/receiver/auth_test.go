package receiver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/inplace-dev/inplace/pkg/inputs/registry"
)

// credential sets a delivery's credentials: right, wrong, or none.
type credential func(t *testing.T, kind string, body []byte) (path string, h http.Header)

const (
	none  = "missing"
	wrong = "wrong"
	right = "right"
)

func urlToken(secret string) credential {
	return func(_ *testing.T, kind string, _ []byte) (string, http.Header) {
		switch kind {
		case right:
			return "/hooks/r/" + secret, http.Header{}
		case wrong:
			return "/hooks/r/" + secret + "x", http.Header{}
		}
		return "/hooks/r", http.Header{}
	}
}

func header(name, value string) credential {
	return func(_ *testing.T, kind string, _ []byte) (string, http.Header) {
		h := http.Header{}
		switch kind {
		case right:
			h.Set(name, value)
		case wrong:
			h.Set(name, value[:len(value)-1])
		}
		return "/hooks/r", h
	}
}

func signed(name, prefix, key string) credential {
	return func(_ *testing.T, kind string, body []byte) (string, http.Header) {
		h := http.Header{}
		switch kind {
		case right:
			h.Set(name, prefix+hexHMAC(key, body))
		case wrong:
			h.Set(name, prefix+hexHMAC(key+"x", body))
		}
		return "/hooks/r", h
	}
}

func bearerOIDC(iss *testIssuer) credential {
	return func(t *testing.T, kind string, _ []byte) (string, http.Header) {
		h := http.Header{}
		c := iss.claims()
		switch kind {
		case right:
			h.Set("Authorization", "Bearer "+iss.sign(t, c, iss.key))
		case wrong:
			c["aud"] = "https://other.example.com/hooks/gar"
			h.Set("Authorization", "Bearer "+iss.sign(t, c, iss.key))
		}
		return "/hooks/r", h
	}
}

func hexHMAC(key string, body []byte) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// TestAuthEveryFormat: for every authenticated format, with the
// authentication its registry can do, a missing or wrong credential is a
// 401 and publishes nothing, the right one is a 202.
func TestAuthEveryFormat(t *testing.T) {
	iss := newIssuer(t)
	secret := &Secret{Value: "s3cret-Value"}
	tests := []struct {
		name    string
		format  registry.Format
		payload string
		auth    *Auth
		cred    credential
	}{
		{"dockerhub urltoken", registry.DockerHub, "docs_push", &Auth{Type: AuthURLToken, Secret: secret}, urlToken("s3cret-Value")},
		{"quay urltoken", registry.Quay, "docs_repo_push", &Auth{Type: AuthURLToken, Secret: secret}, urlToken("s3cret-Value")},
		{"distribution bearer header", registry.Distribution, "gitlab_push_keel", &Auth{Type: AuthToken, Prefix: str("Bearer "), Secret: secret}, header("Authorization", "Bearer s3cret-Value")},
		{"harbor auth header verbatim", registry.Harbor, "docs_push_tagged", &Auth{Type: AuthToken, Secret: &Secret{Value: "Basic aGFyYm9yOnNlY3JldA=="}}, header("Authorization", "Basic aGFyYm9yOnNlY3JldA==")},
		{"harbor cloudevents", registry.Harbor, "cloudevents_push_tagged", &Auth{Type: AuthToken, Secret: secret}, header("Authorization", "s3cret-Value")},
		{"acr custom header", registry.ACR, "keel_push", &Auth{Type: AuthToken, Secret: secret}, header("Authorization", "s3cret-Value")},
		{"ecr api destination key", registry.ECR, "docs_push_full_digest", &Auth{Type: AuthToken, Header: "X-Api-Key", Secret: secret}, header("X-Api-Key", "s3cret-Value")},
		{"ghcr hmac", registry.GHCR, "keel_package_tagged", &Auth{Type: AuthHMAC, Secret: secret}, signed("X-Hub-Signature-256", "sha256=", "s3cret-Value")},
		{"gitea hmac", registry.Gitea, "gitea_package_created", &Auth{Type: AuthHMAC, Secret: secret}, signed("X-Gitea-Signature", "", "s3cret-Value")},
		{"forgejo hmac", registry.Gitea, "gitea_package_created", &Auth{Type: AuthHMAC, Secret: secret}, signed("X-Forgejo-Signature", "", "s3cret-Value")},
		{"jfrog signed", registry.JFrog, "keel_docs_pushed", &Auth{Type: AuthHMAC, Secret: secret}, signed("X-JFrog-Event-Auth", "", "s3cret-Value")},
		{"jfrog secret token", registry.JFrog, "keel_docs_pushed", &Auth{Type: AuthToken, Secret: secret}, header("X-JFrog-Event-Auth", "s3cret-Value")},
		{"gar pubsub oidc", registry.GAR, "docs_insert_full_digest", iss.auth(), bearerOIDC(iss)},
		{"cdevents bearer", registry.CDEvents, "cdevents_artifact_published_v04", &Auth{Type: AuthToken, Prefix: str("Bearer "), Secret: secret}, header("Authorization", "Bearer s3cret-Value")},
		{"generic hmac", registry.Generic, "image", &Auth{Type: AuthHMAC, Header: "X-Signature", Prefix: str("sha256="), Secret: secret}, signed("X-Signature", "sha256=", "s3cret-Value")},
	}
	for _, tt := range tests {
		for _, kind := range []string{none, wrong, right} {
			t.Run(tt.name+"/"+kind, func(t *testing.T) {
				g := loadGolden(t, tt.format, tt.payload)
				h, pub, _ := newTest(t, Config{Routes: []Route{{Name: "r", Format: tt.format, Auth: tt.auth}}})
				path, hdr := tt.cred(t, kind, g.body)
				for k, v := range g.header {
					hdr[k] = v
				}
				w := post(t, h, path, hdr, g.body)
				want := http.StatusUnauthorized
				if kind == right {
					want = http.StatusAccepted
				}
				if w.Code != want {
					t.Fatalf("status %d (%s); want %d", w.Code, strings.TrimSpace(w.Body.String()), want)
				}
				if n := len(pub.published()); (n > 0) != (kind == right) {
					t.Errorf("published %d events", n)
				}
			})
		}
	}
}

// TestHMACGitHubVector checks the example of GitHub's "Validating webhook
// deliveries" page.
func TestHMACGitHubVector(t *testing.T) {
	a := hmacAuth{key: []byte("It's a Secret to Everybody"), sigs: defaultSignatures(registry.GHCR)}
	r := httptest.NewRequest(http.MethodPost, "/hooks/r", nil)
	r.Header.Set("X-Hub-Signature-256", "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17")
	if err := a.check(r, "", []byte("Hello, World!")); err != nil {
		t.Fatalf("GitHub's test vector: %v", err)
	}
	if err := a.check(r, "", []byte("Hello, World?")); err != errBadSignature {
		t.Fatalf("another body: %v; want signature mismatch", err)
	}
}

func TestUnauthorizedSaysLittle(t *testing.T) {
	h, _, _ := newTest(t, Config{Routes: []Route{{Name: "r", Format: registry.GHCR, Auth: &Auth{Type: AuthHMAC, Secret: &Secret{Value: "k"}}}}})
	for hdr, want := range map[string]string{"": "missing signature", "sha256=zz": "signature mismatch", "sha256=00": "signature mismatch"} {
		w := post(t, h, "/hooks/r", http.Header{"X-Hub-Signature-256": {hdr}}, []byte(`{}`))
		if w.Code != http.StatusUnauthorized || strings.TrimSpace(w.Body.String()) != `{"error":"`+want+`"}` {
			t.Errorf("signature %q: %d %s; want 401 %q", hdr, w.Code, w.Body, want)
		}
	}
}

func TestURLTokenInQuery(t *testing.T) {
	h, pub, _ := newTest(t, Config{Routes: []Route{{Name: "r", Format: registry.DockerHub, Auth: &Auth{Type: AuthURLToken, Secret: &Secret{Value: "tok"}}}}})
	g := loadGolden(t, registry.DockerHub, "docs_push")
	if w := post(t, h, "/hooks/r?token=tok", nil, g.body); w.Code != http.StatusAccepted || len(pub.published()) != 1 {
		t.Fatalf("?token=: %d %s", w.Code, w.Body)
	}
	if w := post(t, h, "/hooks/r?token=bad", nil, g.body); w.Code != http.StatusUnauthorized {
		t.Fatalf("?token=bad: %d %s", w.Code, w.Body)
	}
}
