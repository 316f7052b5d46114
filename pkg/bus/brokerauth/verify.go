package brokerauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
)

// Open are the paths served without a token: the probes (the kubelet and
// Knative Serving send none) and the metrics. No event is decoded there.
var Open = []string{"/health/readiness", "/health/liveness", "/metrics"}

// Verifier checks the sender's token on every request but those to Open.
type Verifier struct {
	cfg    Config
	client rest.Interface
	keys   *apiServerKeys
	now    func() time.Time
	log    *slog.Logger

	rejected *prometheus.CounterVec

	mu     sync.Mutex
	tokens *oidc.IDTokenVerifier // once the issuer is known
}

// Reasons a request is refused, the label of the rejection metric.
const (
	ReasonMissing     = "missing"     // no bearer token
	ReasonMalformed   = "malformed"   // not a JWS
	ReasonSignature   = "signature"   // not signed by the cluster's issuer keys
	ReasonIssuer      = "issuer"      // another issuer
	ReasonAudience    = "audience"    // not this function's audience
	ReasonExpired     = "expired"     // past exp
	ReasonSubject     = "subject"     // a sender not in the list
	ReasonInvalid     = "invalid"     // anything else go-oidc refuses
	ReasonUnavailable = "unavailable" // the keys or issuer could not be read (503)
)

// New returns a Verifier reading the issuer keys through client (the
// function's own API server client), counting rejections on reg.
func New(cfg Config, client rest.Interface, reg prometheus.Registerer, log *slog.Logger) (*Verifier, error) {
	v := &Verifier{cfg: cfg, client: client, now: time.Now, log: log,
		keys: &apiServerKeys{client: client, now: time.Now},
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "inplace", Subsystem: "function", Name: "sender_rejected_total",
			Help: "Requests refused because their sender token did not verify, by reason (" +
				strings.Join([]string{ReasonMissing, ReasonMalformed, ReasonSignature, ReasonIssuer, ReasonAudience,
					ReasonExpired, ReasonSubject, ReasonInvalid, ReasonUnavailable}, ", ") + ").",
		}, []string{"reason"}),
	}
	if reg != nil {
		if err := reg.Register(v.rejected); err != nil {
			return nil, fmt.Errorf("brokerauth: %w", err)
		}
	}
	if len(cfg.Subjects) == 0 {
		log.Warn("sender verification allows any subject: anyone who may create a token for some ServiceAccount can mint this audience; set "+SubjectsKey,
			"audience", cfg.Audience)
	}
	return v, nil
}

// Require answers 401 for a request whose sender token does not verify and
// 503 when it cannot be checked now; only a verified request reaches next.
func (v *Verifier) Require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slices.Contains(Open, r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		reason, err := v.Check(r.Context(), r.Header.Get("Authorization"))
		if err == nil {
			next.ServeHTTP(w, r)
			return
		}
		v.rejected.WithLabelValues(reason).Inc()
		v.log.Warn("request refused: sender not verified", "reason", reason, "err", err, "remote", r.RemoteAddr, "ce-id", r.Header.Get("Ce-Id"))
		if reason == ReasonUnavailable {
			http.Error(w, "sender not verified: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("WWW-Authenticate", challenge(reason, err))
		http.Error(w, "sender not verified: "+err.Error(), http.StatusUnauthorized)
	})
}

func challenge(reason string, err error) string {
	if reason == ReasonMissing {
		return `Bearer realm="inplace"`
	}
	desc := strings.NewReplacer(`"`, `'`, "\\", "/").Replace(err.Error())
	return fmt.Sprintf(`Bearer realm="inplace", error="invalid_token", error_description="%s"`, desc)
}

// Check verifies the value of an Authorization header; on failure it says
// why (a Reason) and the error to answer with.
func (v *Verifier) Check(ctx context.Context, authorization string) (string, error) {
	raw, ok := strings.CutPrefix(authorization, "Bearer ")
	if raw = strings.TrimSpace(raw); !ok || raw == "" {
		return ReasonMissing, errors.New("no `Authorization: Bearer <token>` header: is the Broker's authentication-oidc on, and does the Trigger set spec.subscriber.audience?")
	}
	tokens, err := v.verifier(ctx)
	if err != nil {
		return ReasonUnavailable, err
	}
	ctx, unavailable := withUnavailable(ctx)
	tok, err := tokens.Verify(ctx, raw)
	if *unavailable != nil {
		return ReasonUnavailable, *unavailable
	}
	if err != nil {
		return classify(err), err
	}
	if len(v.cfg.Subjects) > 0 && !slices.Contains(v.cfg.Subjects, tok.Subject) {
		return ReasonSubject, fmt.Errorf("token of %q, not of an allowed sender (%s)", tok.Subject, strings.Join(v.cfg.Subjects, ", "))
	}
	return "", nil
}

// classify names go-oidc's refusal; only the metric label depends on it.
func classify(err error) string {
	var expired *oidc.TokenExpiredError
	msg := err.Error()
	switch {
	case errors.As(err, &expired):
		return ReasonExpired
	case strings.Contains(msg, "expected audience"):
		return ReasonAudience
	case strings.Contains(msg, "issued by a different provider"):
		return ReasonIssuer
	case strings.Contains(msg, "malformed"):
		return ReasonMalformed
	case strings.Contains(msg, "failed to verify signature"):
		return ReasonSignature
	}
	return ReasonInvalid
}

// verifier is go-oidc's token verifier for the issuer, read from the API
// server's discovery document the first time when not configured.
func (v *Verifier) verifier(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.tokens != nil {
		return v.tokens, nil
	}
	issuer := v.cfg.Issuer
	if issuer == "" {
		raw, err := get(ctx, v.client, DiscoveryPath)
		if err != nil {
			return nil, err
		}
		var doc struct {
			Issuer string `json:"issuer"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil || doc.Issuer == "" {
			return nil, fmt.Errorf("%w: %s names no issuer (%v)", errUnavailable, DiscoveryPath, err)
		}
		issuer = doc.Issuer
	}
	names := make([]string, 0, len(algs))
	for _, a := range algs {
		names = append(names, string(a))
	}
	v.tokens = oidc.NewVerifier(issuer, v.keys, &oidc.Config{
		ClientID: v.cfg.Audience, SupportedSigningAlgs: names, Now: v.now,
	})
	v.log.Info("sender verification on", "issuer", issuer, "audience", v.cfg.Audience, "subjects", v.cfg.Subjects)
	return v.tokens, nil
}
