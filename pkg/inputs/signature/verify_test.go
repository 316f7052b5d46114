package signature_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/inputs/signature"
	"github.com/inplace-dev/inplace/pkg/inputs/signature/signtest"
	testregistry "github.com/inplace-dev/inplace/test/registry"
)

type secrets map[string]*corev1.Secret

func (s secrets) Get(_ context.Context, ns, name string) (*corev1.Secret, error) {
	if sec, ok := s[ns+"/"+name]; ok {
		return sec, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

// check fails the test on err.
func check(t *testing.T) func(error) {
	return func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Images in a real registry, signed (or not) as cosign v3 does, checked
// against a key and a keyless identity.
func TestVerify(t *testing.T) {
	ctx := t.Context()
	reg, err := testregistry.Start(ctx, testregistry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	ok := check(t)
	key, err := signtest.NewKey()
	ok(err)
	other, err := signtest.NewKey()
	ok(err)
	ca, err := signtest.NewCA()
	ok(err)
	bundle := func(b []byte, err error) []byte {
		t.Helper()
		ok(err)
		return b
	}
	rootPath := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := ca.WriteTrustedRoot(rootPath); err != nil {
		t.Fatal(err)
	}
	const ci, issuer = "https://ci.example/release.yml@refs/heads/main", "https://token.ci.example"

	push := func(tag string) events.ImagePushedData {
		d, err := reg.Push(ctx, "team/app", tag)
		if err != nil {
			t.Fatal(err)
		}
		return events.ImagePushedData{Registry: reg.Host(), Repository: "team/app", Tag: tag, Digest: d, Origin: "test"}
	}
	attach := func(p events.ImagePushedData, bundle []byte) {
		if _, err := signtest.Attach(ctx, reg.Host(), p.Repository, p.Digest, bundle, reg.Transport()); err != nil {
			t.Fatal(err)
		}
	}
	signed, unsigned, wrongKey, elsewhere, keyless, wrongID := push("signed"), push("unsigned"), push("other-key"),
		push("elsewhere"), push("keyless"), push("wrong-id")
	attach(signed, bundle(key.Sign(signtest.Statement(signed.Name(), signed.Digest))))
	attach(wrongKey, bundle(other.Sign(signtest.Statement(wrongKey.Name(), wrongKey.Digest))))
	// A real signature of the signed digest, attached to another one.
	attach(elsewhere, bundle(key.Sign(signtest.Statement(signed.Name(), signed.Digest))))
	attach(keyless, bundle(ca.SignKeyless(signtest.Statement(keyless.Name(), keyless.Digest), ci, issuer)))
	attach(wrongID, bundle(ca.SignKeyless(signtest.Statement(wrongID.Name(), wrongID.Digest), "https://evil.example/x.yml", issuer)))

	v := &signature.Verifier{TrustedRoot: rootPath, Secrets: secrets{"shop/cosign": {Data: map[string][]byte{
		signature.KeySecretKey: key.PublicPEM()}}}}
	byKey := signature.Policy{Key: "cosign"}
	byCI := signature.Policy{Identity: ci, Issuer: issuer}
	byCIRegexp := signature.Policy{Identity: `regexp:https://ci\.example/.*`, Issuer: issuer}
	tests := []struct {
		name     string
		push     events.ImagePushedData
		policy   signature.Policy
		signer   string // substring of the signer, when accepted
		unsigned bool
		why      string // substring of the refusal
	}{
		{"signed by the key", signed, byKey, "key shop/cosign (sha256:", false, ""},
		{"unsigned", unsigned, byKey, "", true, "no Sigstore bundle is attached"},
		{"signed by another key", wrongKey, byKey, "", false, "no signature on"},
		{"a signature of another digest", elsewhere, byKey, "", false, "no signature on"},
		{"keyless, the right identity", keyless, byCI, ci + " (issuer " + issuer + ")", false, ""},
		{"keyless, identity by regexp", keyless, byCIRegexp, ci, false, ""},
		{"keyless, another identity", wrongID, byCI, "", false, "no signature on"},
		{"key-signed, keyless wanted", signed, byCI, "", false, "no signature on"},
		{"keyless-signed, key wanted", keyless, byKey, "", false, "no signature on"},
		{"key or identity, either will do", keyless, signature.Policy{Key: "cosign", Identity: ci, Issuer: issuer}, ci, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := v.Verify(ctx, signature.Request{Push: tt.push, Namespace: "shop", Policy: tt.policy})
			if tt.signer != "" {
				if err != nil || !strings.Contains(got, tt.signer) {
					t.Fatalf("Verify = %q, %v; want a signer like %q", got, err, tt.signer)
				}
				return
			}
			if !errors.Is(err, signature.ErrRefused) || errors.Is(err, signature.ErrUnsigned) != tt.unsigned ||
				!strings.Contains(err.Error(), tt.why) {
				t.Fatalf("Verify = %q, %v; want refused (unsigned %v) saying %q", got, err, tt.unsigned, tt.why)
			}
		})
	}
	t.Run("keyless without a trusted root", func(t *testing.T) {
		_, err := (&signature.Verifier{}).Verify(ctx, signature.Request{Push: keyless, Namespace: "shop", Policy: byCI})
		if !errors.Is(err, signature.ErrRefused) || !strings.Contains(err.Error(), "trusted root") {
			t.Fatalf("err %v", err)
		}
	})
}

// failing fails every request whose path contains one of its strings:
// with a network error, or with the status when it is set.
type failing struct {
	next   http.RoundTripper
	paths  []string
	status int
}

func (f *failing) RoundTrip(req *http.Request) (*http.Response, error) {
	for _, p := range f.paths {
		if strings.Contains(req.URL.Path, p) {
			if f.status == 0 {
				return nil, errors.New("read: connection reset by peer")
			}
			return &http.Response{StatusCode: f.status, Status: http.StatusText(f.status), Header: http.Header{},
				Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
		}
	}
	return f.next.RoundTrip(req)
}

// A signed push whose bundle the registry fails to hand over (a broken
// connection, a 5xx, a 429) is not refused: the error is one to try again,
// and the next try, with the registry answering, finds the signer. A bundle
// the registry answers 404 for is a reason to refuse.
func TestABundleNotReadIsNoRefusal(t *testing.T) {
	ctx := t.Context()
	reg, err := testregistry.Start(ctx, testregistry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	key, err := signtest.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	d, err := reg.Push(ctx, "team/app", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	p := events.ImagePushedData{Registry: reg.Host(), Repository: "team/app", Tag: "1.0.0", Digest: d, Origin: "test"}
	b, err := key.Sign(signtest.Statement(p.Name(), p.Digest))
	if err != nil {
		t.Fatal(err)
	}
	referrer, err := signtest.Attach(ctx, reg.Host(), p.Repository, p.Digest, b, reg.Transport())
	if err != nil {
		t.Fatal(err)
	}
	req := signature.Request{Push: p, Namespace: "shop", Policy: signature.Policy{Key: "cosign"}}
	secrets := secrets{"shop/cosign": {Data: map[string][]byte{signature.KeySecretKey: key.PublicPEM()}}}
	for _, tt := range []struct {
		name    string
		status  int
		refused bool
	}{
		{"connection broken", 0, false},
		{"503", http.StatusServiceUnavailable, false},
		{"429", http.StatusTooManyRequests, false},
		{"404", http.StatusNotFound, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr := &failing{next: reg.Transport(), paths: []string{"/manifests/" + referrer}, status: tt.status}
			v := &signature.Verifier{Secrets: secrets, Transport: tr}
			_, err := v.Verify(ctx, req)
			if err == nil || errors.Is(err, signature.ErrRefused) != tt.refused || !strings.Contains(err.Error(), referrer) {
				t.Fatalf("Verify with the bundle's manifest failing = %v; want an error naming %s, refused %v", err, referrer, tt.refused)
			}
			tr.paths = nil
			signer, err := v.Verify(ctx, req)
			if err != nil || !strings.Contains(signer, "key shop/cosign") {
				t.Fatalf("Verify again with the registry answering = %q, %v; want the key", signer, err)
			}
		})
	}
}
