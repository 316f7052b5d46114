package signature_test

import (
	"context"
	"errors"
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
		if _, err := signtest.Attach(ctx, reg.Host(), p.Repository, p.Digest, bundle, nil); err != nil {
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
