package brokerauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
)

// Paths the kube-apiserver serves its service-account issuer discovery on
// (readable with the ClusterRole system:service-account-issuer-discovery).
const (
	DiscoveryPath = "/.well-known/openid-configuration"
	JWKSPath      = "/openid/v1/jwks"
)

// algs are the signing algorithms of service-account tokens: RS256 for an
// RSA key, ES256/384/512 for an EC key (kube-apiserver's --service-account-signing-key-file).
var algs = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.ES256, jose.ES384, jose.ES512, jose.PS256, jose.PS384, jose.PS512}

// minRefresh bounds how often a token naming an unknown key reads the
// JWKS again: forged kids cannot make the function hammer the API server.
const minRefresh = 10 * time.Second

// errUnavailable marks what keeps a token from being checked now (503).
var errUnavailable = errors.New("cannot verify the sender now")

// apiServerKeys is the cluster's issuer key set (oidc.KeySet), read from
// the API server with the function's own credentials, cached, and read
// again when a token names a key not in the cache (a rotation).
type apiServerKeys struct {
	client rest.Interface
	now    func() time.Time

	mu      sync.Mutex
	keys    *jose.JSONWebKeySet
	fetched time.Time
}

// get reads path from the API server; a refusal names the missing grant.
func get(ctx context.Context, c rest.Interface, path string) ([]byte, error) {
	raw, err := c.Get().AbsPath(path).DoRaw(ctx)
	switch {
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		return nil, fmt.Errorf("%w: the function's ServiceAccount may not read %s (bind the ClusterRole system:service-account-issuer-discovery): %v", errUnavailable, path, err)
	case err != nil:
		return nil, fmt.Errorf("%w: read %s from the API server: %v", errUnavailable, path, err)
	}
	return raw, nil
}

// load returns the cached keys, reading them when there are none or when
// refresh asks and the last read is older than minRefresh.
func (k *apiServerKeys) load(ctx context.Context, refresh bool) (*jose.JSONWebKeySet, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.keys != nil && (!refresh || k.now().Sub(k.fetched) < minRefresh) {
		return k.keys, nil
	}
	raw, err := get(ctx, k.client, JWKSPath)
	if err != nil {
		return nil, err
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("%w: decode %s: %v", errUnavailable, JWKSPath, err)
	}
	k.keys, k.fetched = &set, k.now()
	return k.keys, nil
}

// VerifySignature implements oidc.KeySet: the token's signature by the
// issuer key its header names.
func (k *apiServerKeys) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	jws, err := jose.ParseSigned(jwt, algs)
	if err != nil {
		return nil, fmt.Errorf("malformed token: %w", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, fmt.Errorf("want one signature, got %d", len(jws.Signatures))
	}
	kid := jws.Signatures[0].Header.KeyID
	set, err := k.load(ctx, false)
	if err != nil {
		return nil, noteUnavailable(ctx, err)
	}
	if len(set.Key(kid)) == 0 {
		if set, err = k.load(ctx, true); err != nil {
			return nil, noteUnavailable(ctx, err)
		}
	}
	for _, key := range set.Key(kid) {
		if payload, err := jws.Verify(key); err == nil {
			return payload, nil
		}
	}
	return nil, fmt.Errorf("not signed by the cluster's service-account issuer (key id %q)", kid)
}

// unavailableKey carries, per request, why the keys could not be read:
// go-oidc wraps the KeySet's error as text, so the kind travels beside it.
type unavailableKey struct{}

func withUnavailable(ctx context.Context) (context.Context, *error) {
	var e error
	return context.WithValue(ctx, unavailableKey{}, &e), &e
}

func noteUnavailable(ctx context.Context, err error) error {
	if p, ok := ctx.Value(unavailableKey{}).(*error); ok {
		*p = err
	}
	return err
}
