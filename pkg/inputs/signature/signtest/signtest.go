// Package signtest signs images the way cosign v3 does, for tests: a
// Sigstore bundle (a DSSE in-toto statement with cosign's signature
// predicate over the manifest digest, made by sigstore-go's sign package)
// attached to the image as an OCI referrer. Keys are generated in the
// test; keyless signing uses a test certificate authority whose trusted
// root the test writes to a file (no public Sigstore instance is reachable
// from the test world). It is test support: nothing in the chain uses it.
package signtest

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/inplace-dev/inplace/pkg/inputs/signature"
)

// Key is a signing key pair generated for a test.
type Key struct{ kp *sign.EphemeralKeypair }

// NewKey generates a key pair (ECDSA P-256, as `cosign generate-key-pair`).
func NewKey() (*Key, error) {
	kp, err := sign.NewEphemeralKeypair(nil)
	if err != nil {
		return nil, err
	}
	return &Key{kp: kp}, nil
}

// PublicPEM is the public key as cosign.pub holds it.
func (k *Key) PublicPEM() []byte {
	s, _ := k.kp.GetPublicKeyPem()
	return []byte(s)
}

// Statement is the in-toto statement cosign v3 signs for an image.
func Statement(repo, digest string) []byte {
	st := map[string]any{
		"_type": "https://in-toto.io/Statement/v1",
		"subject": []map[string]any{{"name": repo,
			"digest": map[string]string{"sha256": strings.TrimPrefix(digest, "sha256:")}}},
		"predicateType": signature.SignPredicate,
		"predicate":     map[string]any{},
	}
	b, _ := json.Marshal(st)
	return b
}

// Sign makes the bundle of statement signed by k (no transparency log, as
// `cosign sign --key --tlog-upload=false`).
func (k *Key) Sign(statement []byte) ([]byte, error) {
	return bundleJSON(statement, k.kp, sign.BundleOptions{})
}

func bundleJSON(statement []byte, kp sign.Keypair, opts sign.BundleOptions) ([]byte, error) {
	b, err := sign.Bundle(&sign.DSSEData{Data: statement, PayloadType: "application/vnd.in-toto+json"}, kp, opts)
	if err != nil {
		return nil, err
	}
	return protojson.Marshal(b)
}

// CA is a test certificate authority standing in for Fulcio.
type CA struct {
	root, inter *x509.Certificate
	interKey    *ecdsa.PrivateKey
}

// NewCA makes a root and an intermediate.
func NewCA() (*CA, error) {
	rootKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	rootCert, err := cert(&x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-fulcio-root"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}, nil, &rootKey.PublicKey, rootKey)
	if err != nil {
		return nil, err
	}
	interKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	inter, err := cert(&x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "test-fulcio-intermediate"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning}},
		rootCert, &interKey.PublicKey, rootKey)
	if err != nil {
		return nil, err
	}
	return &CA{root: rootCert, inter: inter, interKey: interKey}, nil
}

func cert(tmpl, parent *x509.Certificate, pub crypto.PublicKey, signer crypto.Signer) (*x509.Certificate, error) {
	if parent == nil {
		parent = tmpl
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}

// WriteTrustedRoot writes the CA as a Sigstore trusted_root.json (no
// transparency log, no timestamp authority: certificates are checked at
// the current time) and returns its path.
func (c *CA) WriteTrustedRoot(path string) error {
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, []root.CertificateAuthority{&root.FulcioCertificateAuthority{
		Root: c.root, Intermediates: []*x509.Certificate{c.inter}, URI: "https://fulcio.test",
		ValidityPeriodStart: c.root.NotBefore, ValidityPeriodEnd: c.root.NotAfter}}, nil, nil, nil)
	if err != nil {
		return err
	}
	b, err := tr.MarshalJSON()
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// oidOIDCIssuerV2 is Fulcio's OIDC issuer extension (a DER UTF8String).
var oidOIDCIssuerV2 = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 8}

// GetCertificate implements sign.CertificateProvider: a leaf for the
// keypair, issued to identity (an email or a URI) by issuer.
type provider struct {
	ca               *CA
	identity, issuer string
}

func (p provider) GetCertificate(_ context.Context, kp sign.Keypair, _ *sign.CertificateProviderOptions) ([]byte, error) {
	iss, err := asn1.MarshalWithParams(p.issuer, "utf8")
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(now.UnixNano()), NotBefore: now.Add(-time.Minute), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
		ExtraExtensions: []pkix.Extension{{Id: oidOIDCIssuerV2, Value: iss}}}
	if strings.Contains(p.identity, "://") {
		u, err := parseURL(p.identity)
		if err != nil {
			return nil, err
		}
		tmpl.URIs = u
	} else {
		tmpl.EmailAddresses = []string{p.identity}
	}
	c, err := cert(tmpl, p.ca.inter, kp.GetPublicKey(), p.ca.interKey)
	if err != nil {
		return nil, err
	}
	return c.Raw, nil
}

// SignKeyless makes the bundle of statement signed with a fresh key and a
// certificate from the CA for identity and issuer.
func (c *CA) SignKeyless(statement []byte, identity, issuer string) ([]byte, error) {
	kp, err := sign.NewEphemeralKeypair(nil)
	if err != nil {
		return nil, err
	}
	return bundleJSON(statement, kp, sign.BundleOptions{CertificateProvider: provider{ca: c, identity: identity, issuer: issuer}})
}

// Attach pushes bundle as an OCI referrer of repo@digest on the registry
// at host, as cosign v3 does (artifactType and layer of the bundle media
// type, an empty config, the signed manifest as subject). It returns the
// referrer's digest.
func Attach(ctx context.Context, host, repo, digest string, bundle []byte, tr http.RoundTripper) (string, error) {
	if tr == nil {
		tr = http.DefaultTransport
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithTransport(tr)}
	subjectRef, err := name.NewDigest(host + "/" + repo + "@" + digest)
	if err != nil {
		return "", err
	}
	subject, err := remote.Head(subjectRef, opts...)
	if err != nil {
		return "", fmt.Errorf("attach to %s: %w", subjectRef, err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, "application/vnd.oci.empty.v1+json")
	img, err = mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(bundle, signature.BundleType)})
	if err != nil {
		return "", err
	}
	withType := artifact{Image: img, subject: *subject}
	dref := subjectRef.Context().Digest(digest) // only its repository is used
	d, err := withType.Digest()
	if err != nil {
		return "", err
	}
	if err := remote.Write(dref.Context().Digest(d.String()), withType, opts...); err != nil {
		return "", fmt.Errorf("attach to %s: %w", subjectRef, err)
	}
	return d.String(), nil
}

// artifact is an image manifest with an artifactType and a subject, which
// go-containerregistry's mutate does not set together.
type artifact struct {
	v1.Image
	subject v1.Descriptor
}

func (a artifact) RawManifest() ([]byte, error) {
	m, err := a.Image.Manifest()
	if err != nil {
		return nil, err
	}
	m = m.DeepCopy()
	m.Subject = &v1.Descriptor{MediaType: a.subject.MediaType, Digest: a.subject.Digest, Size: a.subject.Size}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	obj["artifactType"] = signature.BundleType
	obj["config"].(map[string]any)["mediaType"] = "application/vnd.oci.empty.v1+json"
	return json.Marshal(obj)
}

func (a artifact) Manifest() (*v1.Manifest, error) {
	raw, err := a.RawManifest()
	if err != nil {
		return nil, err
	}
	return v1.ParseManifest(strings.NewReader(string(raw)))
}

func (a artifact) Digest() (v1.Hash, error) {
	raw, err := a.RawManifest()
	if err != nil {
		return v1.Hash{}, err
	}
	h, _, err := v1.SHA256(strings.NewReader(string(raw)))
	return h, err
}

func (a artifact) Size() (int64, error) {
	raw, err := a.RawManifest()
	return int64(len(raw)), err
}
