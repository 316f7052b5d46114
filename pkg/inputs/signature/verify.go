package signature

import (
	"context"
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	sigsig "github.com/sigstore/sigstore/pkg/signature"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/inputs/keychain"
)

// SignPredicate is the in-toto predicate type of a cosign image signature.
const SignPredicate = "https://sigstore.dev/cosign/sign/v1"

// ErrRefused marks a digest that is not signed as the policy wants: no
// bundle at all (ErrUnsigned too), or none that verifies.
var ErrRefused = errors.New("not signed as required")

// ErrUnsigned marks a digest with no Sigstore bundle attached (yet: a
// signature is often pushed a moment after the image).
var ErrUnsigned = errors.New("unsigned")

// SecretGetter reads one Secret.
type SecretGetter interface {
	Get(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// Verifier checks pushed digests against policies.
type Verifier struct {
	Secrets SecretGetter
	// Transport reaches the registries; default http.DefaultTransport.
	Transport http.RoundTripper
	// TrustedRoot is the path of a Sigstore trusted_root.json, for keyless
	// policies.
	TrustedRoot string
}

// Request is one digest to check for one workload.
type Request struct {
	Push events.ImagePushedData
	// Namespace is the workload's, where a bare key Secret name resolves.
	Namespace string
	Policy    Policy
	// PullSecrets ("namespace/name") reach the registry: the workload's
	// pods' imagePullSecrets.
	PullSecrets []string
	// TrustedRoot, when set, replaces the Verifier's (config-inplace
	// signature-trusted-root, which may change at any time).
	TrustedRoot string
}

// Verify returns who signed the pushed digest, as the policy wants, or an
// error: ErrRefused (with ErrUnsigned when nothing is attached) naming
// every reason, or another (retryable) error when the registry or the
// cluster could not be asked, or when a bundle could not be read and none
// that was read verifies.
func (v *Verifier) Verify(ctx context.Context, r Request) (string, error) {
	if r.Push.Digest == "" {
		return "", fmt.Errorf("%w: the push of %s names no digest, and only a digest can be verified", ErrRefused, r.Push.Ref())
	}
	checks, err := v.checks(ctx, r)
	if err != nil {
		return "", err
	}
	d, err := name.NewDigest(r.Push.Name() + "@" + r.Push.Digest)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrRefused, r.Push.Ref(), err)
	}
	tr := v.Transport
	if tr == nil {
		tr = http.DefaultTransport
	}
	kc, err := keychain.FromSecrets(ctx, v.Secrets, r.PullSecrets)
	if err != nil {
		return "", err
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithTransport(tr), remote.WithAuthFromKeychain(kc)}
	list, err := bundles(d, opts)
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "", fmt.Errorf("%w: %w: no Sigstore bundle is attached to %s (%s wanted)", ErrRefused, ErrUnsigned, r.Push.Digest, r.Policy)
	}
	raw, _ := hex.DecodeString(strings.TrimPrefix(r.Push.Digest, "sha256:"))
	var why []string
	var unread error
	for _, f := range list {
		if f.err != nil {
			why = append(why, f.ref+": "+f.err.Error())
			if f.unread && unread == nil {
				unread = fmt.Errorf("bundle %s of %s could not be read: %w", f.ref, r.Push.Digest, f.err)
			}
			continue
		}
		var fails []string
		for _, c := range checks {
			signer, err := c.verify(f, raw)
			if err == nil {
				return signer, nil
			}
			fails = append(fails, c.name+": "+err.Error())
		}
		why = append(why, f.ref+": "+strings.Join(fails, "; "))
	}
	if unread != nil {
		// The bundle not read may be the one that verifies: try again
		// rather than refuse.
		return "", unread
	}
	return "", fmt.Errorf("%w: no signature on %s verifies as %s: %s", ErrRefused, r.Push.Digest, r.Policy, strings.Join(why, " | "))
}

// check is one way a bundle may verify: a key or a keyless identity.
type check struct {
	name     string
	verifier *verify.Verifier
	policy   verify.PolicyOption
	signer   func(*verify.VerificationResult) string
}

func (c check) verify(f found, digest []byte) (string, error) {
	pb := verify.NewPolicy(verify.WithArtifactDigest("sha256", digest), c.policy)
	res, err := c.verifier.Verify(f.bundle, pb)
	if err != nil {
		return "", err
	}
	if res.Statement != nil && res.Statement.GetPredicateType() != SignPredicate {
		return "", fmt.Errorf("an attestation of %s, not a signature (%s)", res.Statement.GetPredicateType(), SignPredicate)
	}
	return c.signer(res), nil
}

// checks builds the verifiers of r's policy.
func (v *Verifier) checks(ctx context.Context, r Request) ([]check, error) {
	var out []check
	if r.Policy.Key != "" {
		c, err := v.keyCheck(ctx, r)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if r.Policy.Identity != "" {
		trusted := r.TrustedRoot
		if trusted == "" {
			trusted = v.TrustedRoot
		}
		c, err := keylessCheck(r.Policy, trusted)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: the policy names neither a key nor an identity", ErrRefused)
	}
	return out, nil
}

func (v *Verifier) keyCheck(ctx context.Context, r Request) (check, error) {
	ns, secret, err := r.Policy.keyRef(r.Namespace)
	if err != nil {
		return check{}, fmt.Errorf("%w: %s: %v", ErrRefused, AnnotationKey, err)
	}
	s, err := v.Secrets.Get(ctx, ns, secret)
	if err != nil {
		return check{}, fmt.Errorf("signature key %s/%s: %w", ns, secret, err)
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(s.Data[KeySecretKey])
	if err != nil {
		return check{}, fmt.Errorf("%w: signature key %s/%s: %s is not a PEM public key: %v", ErrRefused, ns, secret, KeySecretKey, err)
	}
	sv, err := sigsig.LoadDefaultVerifier(pub)
	if err != nil {
		return check{}, fmt.Errorf("%w: signature key %s/%s: %v", ErrRefused, ns, secret, err)
	}
	key := root.NewExpiringKey(sv, time.Time{}, time.Time{})
	tm := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) { return key, nil })
	vf, err := verify.NewVerifier(tm, verify.WithNoObserverTimestamps())
	if err != nil {
		return check{}, err
	}
	signer := fmt.Sprintf("key %s/%s (%s)", ns, secret, fingerprint(pub))
	return check{name: "key " + ns + "/" + secret, verifier: vf, policy: verify.WithKey(),
		signer: func(*verify.VerificationResult) string { return signer }}, nil
}

// keylessCheck verifies against the trusted root: observer timestamps from
// its transparency logs or timestamp authorities when it has any (a
// short-lived certificate needs one), the current time otherwise (a
// private CA's long-lived certificates); SCTs when it has CT logs.
func keylessCheck(p Policy, trustedRoot string) (check, error) {
	if trustedRoot == "" {
		return check{}, fmt.Errorf("%w: keyless verification needs a trusted root (config-inplace signature-trusted-root)", ErrRefused)
	}
	tr, err := root.NewTrustedRootFromPath(trustedRoot)
	if err != nil {
		return check{}, fmt.Errorf("trusted root %s: %w", trustedRoot, err)
	}
	var opts []verify.VerifierOption
	switch {
	case len(tr.RekorLogs()) > 0:
		opts = append(opts, verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1))
	case len(tr.TimestampingAuthorities()) > 0:
		opts = append(opts, verify.WithSignedTimestamps(1))
	default:
		opts = append(opts, verify.WithCurrentTime())
	}
	if len(tr.CTLogs()) > 0 {
		opts = append(opts, verify.WithSignedCertificateTimestamps(1))
	}
	vf, err := verify.NewVerifier(tr, opts...)
	if err != nil {
		return check{}, err
	}
	iss, issRE := matcher(p.Issuer)
	san, sanRE := matcher(p.Identity)
	id, err := verify.NewShortCertificateIdentity(iss, issRE, san, sanRE)
	if err != nil {
		return check{}, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	return check{name: "identity " + p.Identity, verifier: vf, policy: verify.WithCertificateIdentity(id),
		signer: func(res *verify.VerificationResult) string {
			if c := res.Signature.Certificate; c != nil {
				return fmt.Sprintf("%s (issuer %s)", c.SubjectAlternativeName, c.Extensions.Issuer)
			}
			return p.Identity
		}}, nil
}

// fingerprint is the SHA-256 of the key's DER, as "sha256:<16 hex>".
func fingerprint(pub crypto.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "unknown key"
	}
	sum := sha256.Sum256(der)
	return "sha256:" + hex.EncodeToString(sum[:8])
}
