package receiver

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"

	"github.com/inplace-dev/inplace/pkg/inputs/registry"
)

// unauthorized is a 401. Msg is all the caller learns; Detail is logged.
type unauthorized struct {
	Msg    string
	Detail error
}

func (e *unauthorized) Error() string {
	if e.Detail != nil {
		return e.Msg + ": " + e.Detail.Error()
	}
	return e.Msg
}

var (
	errMissingToken     = &unauthorized{Msg: "missing token"}
	errInvalidToken     = &unauthorized{Msg: "invalid token"}
	errMissingSignature = &unauthorized{Msg: "missing signature"}
	errBadSignature     = &unauthorized{Msg: "signature mismatch"}
)

// newAuthenticator resolves the route's secret and builds its check.
func newAuthenticator(k string, a *Auth, f registry.Format) (authenticator, error) {
	var secret []byte
	if a.Secret != nil {
		s, err := a.Secret.resolve(k + ".secret")
		if err != nil {
			return nil, err
		}
		secret = s
	}
	prefix := func(def string) string {
		if a.Prefix != nil {
			return *a.Prefix
		}
		return def
	}
	switch a.Type {
	case AuthHMAC:
		sigs := defaultSignatures(f)
		if a.Header != "" {
			sigs = []signature{{a.Header, prefix("")}}
		} else if a.Prefix != nil {
			for i := range sigs {
				sigs[i].prefix = *a.Prefix
			}
		}
		return hmacAuth{key: secret, sigs: sigs}, nil
	case AuthToken:
		h := a.Header
		if h == "" {
			h = defaultTokenHeader(f)
		}
		return tokenAuth{header: h, want: sum(prefix("") + string(secret))}, nil
	case AuthURLToken:
		return urlTokenAuth{want: sum(string(secret))}, nil
	case AuthOIDC:
		return newOIDCAuth(a), nil
	}
	return noneAuth{}, nil
}

// hmacAuth checks a hex HMAC-SHA256 of the raw body.
type hmacAuth struct {
	key  []byte
	sigs []signature
}

func (a hmacAuth) check(r *http.Request, _ string, body []byte) error {
	for _, s := range a.sigs {
		got := r.Header.Get(s.header)
		if got == "" {
			continue
		}
		hexSig, ok := strings.CutPrefix(strings.TrimSpace(got), s.prefix)
		sig, err := hex.DecodeString(hexSig)
		if !ok || err != nil {
			return &unauthorized{Msg: errBadSignature.Msg, Detail: fmt.Errorf("%s is not %shex", s.header, s.prefix)}
		}
		m := hmac.New(sha256.New, a.key)
		m.Write(body)
		if !hmac.Equal(sig, m.Sum(nil)) {
			return errBadSignature
		}
		return nil
	}
	return errMissingSignature
}

// tokenAuth compares a header with the expected value. Both are hashed
// first, so the comparison takes the same time whatever their lengths.
type tokenAuth struct {
	header string
	want   [32]byte
}

func (a tokenAuth) check(r *http.Request, _ string, _ []byte) error {
	got := r.Header.Get(a.header)
	if got == "" {
		return errMissingToken
	}
	if !same(sum(got), a.want) {
		return errInvalidToken
	}
	return nil
}

// urlTokenAuth compares the token of /hooks/<route>/<token> or ?token=.
type urlTokenAuth struct{ want [32]byte }

func (a urlTokenAuth) check(r *http.Request, token string, _ []byte) error {
	if token == "" {
		token = r.URL.Query().Get("token")
	}
	if token == "" {
		return errMissingToken
	}
	if !same(sum(token), a.want) {
		return errInvalidToken
	}
	return nil
}

type noneAuth struct{}

func (noneAuth) check(*http.Request, string, []byte) error { return nil }

func sum(s string) [32]byte { return sha256.Sum256([]byte(s)) }

func same(a, b [32]byte) bool { return subtle.ConstantTimeCompare(a[:], b[:]) == 1 }
