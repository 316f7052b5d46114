package function

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	authv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus/brokerauth"
	"github.com/inplace-dev/inplace/test/world"
)

// counted is a function that counts the events it was handed.
type counted struct {
	fake
	n atomic.Int64
}

func (c *counted) Handle(ctx context.Context, e cloudevents.Event) ([]cloudevents.Event, error) {
	c.n.Add(1)
	return c.fake.Handle(ctx, e)
}

// TestSenderVerified: with INPLACE_OIDC_AUDIENCE set, the function takes a
// request only with a token the test world's real kube-apiserver issued
// (TokenRequest, as the Broker's filter asks it for the Trigger's OIDC
// ServiceAccount) for its audience and an allowed subject. The keys are
// read from the API server with the function's own identity, bound to
// system:service-account-issuer-discovery as config/knative binds it.
// Every other request is refused 401 before its event is decoded.
func TestSenderVerified(t *testing.T) {
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	kubeconfig := functionIdentity(t, w, ns, "inplace-verify", true)
	trigger := "inplace-verify-oidc-eventing.knative.dev-trigger" // Knative's name for the Trigger's OIDC ServiceAccount
	for _, sa := range []string{trigger, "intruder"} {
		if _, err := w.Client().CoreV1().ServiceAccounts(ns).Create(t.Context(),
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	aud := "inplace.dev/" + ns + "/verify"
	fn := &counted{fake: fake{types: []string{events.ImagePushed}}}
	url := serve(t, withFakes(fn), map[string]string{
		"INPLACE_KUBECONFIG":   kubeconfig,
		brokerauth.AudienceKey: aud,
		brokerauth.SubjectsKey: "system:serviceaccount:" + ns + ":" + trigger,
	})
	good := token(t, w, ns, trigger, aud)
	expired := forge(t, good, clusterKey(t, w), func(c map[string]any) {
		c["iat"], c["nbf"], c["exp"] = time.Now().Add(-2*time.Hour).Unix(), time.Now().Add(-2*time.Hour).Unix(), time.Now().Add(-time.Hour).Unix()
	})
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, auth string
		status     int
		says       string // in the answer
		reason     string // the metric's label
	}{
		{name: "the Trigger's token for the audience", auth: "Bearer " + good, status: 200},
		{name: "no header", auth: "", status: 401, says: "no `Authorization: Bearer", reason: brokerauth.ReasonMissing},
		{name: "not a bearer token", auth: "Basic dXNlcjpwYXNz", status: 401, says: "no `Authorization: Bearer", reason: brokerauth.ReasonMissing},
		{name: "another audience", auth: "Bearer " + token(t, w, ns, trigger, "inplace.dev/"+ns+"/patch-pod"), status: 401,
			says: "expected audience", reason: brokerauth.ReasonAudience},
		{name: "expired, signed by the cluster's own key", auth: "Bearer " + expired, status: 401, says: "expired", reason: brokerauth.ReasonExpired},
		{name: "signed by another key, same key id", auth: "Bearer " + forge(t, good, other, nil), status: 401,
			says: "not signed by the cluster", reason: brokerauth.ReasonSignature},
		{name: "signed by another key, unknown key id", auth: "Bearer " + forge(t, good, other, nil, "forged-kid"), status: 401,
			says: "not signed by the cluster", reason: brokerauth.ReasonSignature},
		{name: "another subject with the right audience", auth: "Bearer " + token(t, w, ns, "intruder", aud), status: 401,
			says: "system:serviceaccount:" + ns + ":intruder", reason: brokerauth.ReasonSubject},
		{name: "not a JWT", auth: "Bearer not.a.jwt", status: 401, says: "malformed", reason: brokerauth.ReasonMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := fn.n.Load()
			resp := postWith(t, url, pushedEvent(t, "sender-"+strings.ReplaceAll(tt.name, " ", "-"), "one"), tt.auth)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.says) {
				t.Fatalf("status %d (%s), want %d saying %q", resp.StatusCode, body, tt.status, tt.says)
			}
			processed := fn.n.Load() - before
			if tt.status == 200 && processed != 1 {
				t.Errorf("the event was handled %d times, want once", processed)
			}
			if tt.status != 200 {
				if processed != 0 {
					t.Errorf("a refused request reached the function (%d events handled)", processed)
				}
				if resp.Header.Get("WWW-Authenticate") == "" {
					t.Error("a 401 without WWW-Authenticate")
				}
			}
		})
	}
	metrics := get(t, url+"/metrics")
	for _, tt := range tests {
		if tt.reason != "" && !strings.Contains(metrics, `inplace_function_sender_rejected_total{reason="`+tt.reason+`"}`) {
			t.Errorf("metrics do not count reason %q:\n%s", tt.reason, metrics)
		}
	}
	if !strings.Contains(metrics, `inplace_function_sender_rejected_total{reason="missing"} 2`) {
		t.Errorf("metrics: want 2 missing tokens counted:\n%s", metrics)
	}
}

// TestSenderKeysOutOfReach: a function whose ServiceAccount may not read
// the issuer keys (a cluster without Kubernetes' default binding of
// system:service-account-issuer-discovery to every ServiceAccount, and
// without the one config/knative ships) answers 503 (the Broker retries)
// naming the ClusterRole to bind, and handles nothing.
func TestSenderKeysOutOfReach(t *testing.T) {
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	kubeconfig := functionIdentity(t, w, ns, "inplace-verify", false)
	withoutDefaultDiscoveryBinding(t, w, ns, "inplace-verify")
	aud := "inplace.dev/" + ns + "/verify"
	fn := &counted{fake: fake{types: []string{events.ImagePushed}}}
	url := serve(t, withFakes(fn), map[string]string{"INPLACE_KUBECONFIG": kubeconfig, brokerauth.AudienceKey: aud})
	resp := postWith(t, url, pushedEvent(t, "sender-no-keys", "one"), "Bearer "+token(t, w, ns, "inplace-verify", aud))
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "system:service-account-issuer-discovery") {
		t.Fatalf("status %d (%s), want 503 naming system:service-account-issuer-discovery", resp.StatusCode, body)
	}
	if n := fn.n.Load(); n != 0 {
		t.Errorf("%d events handled, want none", n)
	}
}

// withoutDefaultDiscoveryBinding removes, for the test, the binding of
// system:service-account-issuer-discovery to system:serviceaccounts that
// kube-apiserver bootstraps, and waits until the API server denies ns/sa
// the JWKS.
func withoutDefaultDiscoveryBinding(t *testing.T, w *world.World, ns, sa string) {
	t.Helper()
	const name = "system:service-account-issuer-discovery"
	crbs := w.Client().RbacV1().ClusterRoleBindings()
	crb, err := crbs.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := crbs.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		back := crb.DeepCopy()
		back.ResourceVersion, back.UID, back.CreationTimestamp, back.ManagedFields = "", "", metav1.Time{}, nil
		if _, err := crbs.Create(context.Background(), back, metav1.CreateOptions{}); err != nil {
			t.Errorf("restore %s: %v", name, err)
		}
	})
	sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
		User:                  "system:serviceaccount:" + ns + ":" + sa,
		Groups:                []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		NonResourceAttributes: &authzv1.NonResourceAttributes{Path: brokerauth.JWKSPath, Verb: "get"},
	}}
	err = wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := w.Client().AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		return err == nil && !got.Status.Allowed, nil
	})
	if err != nil {
		t.Fatalf("the API server still lets %s read %s: %v", sar.Spec.User, brokerauth.JWKSPath, err)
	}
}

// functionIdentity is a kubeconfig of the ServiceAccount ns/name, bound to
// system:service-account-issuer-discovery when discovery is true.
func functionIdentity(t *testing.T, w *world.World, ns, name string, discovery bool) string {
	t.Helper()
	path, _, err := w.Cluster.MintKubeconfig(t.Context(), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	if !discovery {
		return path
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "issuer-discovery-" + ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:service-account-issuer-discovery"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
	}
	if _, err := w.Client().RbacV1().ClusterRoleBindings().Create(t.Context(), crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = w.Client().RbacV1().ClusterRoleBindings().Delete(context.Background(), crb.Name, metav1.DeleteOptions{})
	})
	return path
}

// token asks the API server for a token of ns/sa for aud, as Knative's
// OIDCTokenProvider does for a Trigger's OIDC ServiceAccount.
func token(t *testing.T, w *world.World, ns, sa, aud string) string {
	t.Helper()
	exp := int64(3600)
	tr, err := w.Client().CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), sa,
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{Audiences: []string{aud}, ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// clusterKey is the key the test world's API server signs tokens with.
func clusterKey(t *testing.T, w *world.World) *ecdsa.PrivateKey {
	t.Helper()
	raw, err := os.ReadFile(w.Cluster.ServiceAccountSigningKey())
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		t.Fatal("service-account key: no PEM block")
	}
	key, err := x509.ParseECPrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// forge re-signs the claims of a real token, changed by edit, with key,
// under the real token's key id or the one given.
func forge(t *testing.T, real string, key *ecdsa.PrivateKey, edit func(map[string]any), kid ...string) string {
	t.Helper()
	tok, err := jwt.ParseSigned(real, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string]any{}
	if err := tok.UnsafeClaimsWithoutVerification(&claims); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(claims)
	}
	id := tok.Headers[0].KeyID
	if len(kid) > 0 {
		id = kid[0]
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", id))
	if err != nil {
		t.Fatal(err)
	}
	s, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// postWith posts e in binary mode with the Authorization header auth.
func postWith(t *testing.T, url string, e cloudevents.Event, auth string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(string(e.Data())))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Ce-Specversion", "1.0")
	req.Header.Set("Ce-Id", e.ID())
	req.Header.Set("Ce-Type", e.Type())
	req.Header.Set("Ce-Source", e.Source())
	req.Header.Set("Ce-Subject", e.Subject())
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
