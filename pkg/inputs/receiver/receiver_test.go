package receiver

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/inplace-dev/inplace/pkg/inputs/registry"
)

func openRoute(f registry.Format) Route {
	return Route{Name: "r", Format: f, Auth: &Auth{Type: AuthNone}}
}

func TestStatusCodes(t *testing.T) {
	dh := loadGolden(t, registry.DockerHub, "docs_push").body
	tests := []struct {
		name   string
		route  Route
		method string
		path   string
		body   []byte
		want   int
		answer string
	}{
		{"accepted", openRoute(registry.DockerHub), http.MethodPost, "/hooks/r", dh, http.StatusAccepted, `"events":[{"id":`},
		{"unknown route", openRoute(registry.DockerHub), http.MethodPost, "/hooks/nope", dh, http.StatusNotFound, `"error":"unknown route"`},
		{"outside the prefix", openRoute(registry.DockerHub), http.MethodPost, "/r", dh, http.StatusNotFound, `unknown route`},
		{"token path on a route without urltoken", openRoute(registry.DockerHub), http.MethodPost, "/hooks/r/x", dh, http.StatusNotFound, `unknown route`},
		{"GET", openRoute(registry.DockerHub), http.MethodGet, "/hooks/r", nil, http.StatusMethodNotAllowed, `only POST`},
		{"not JSON", openRoute(registry.DockerHub), http.MethodPost, "/hooks/r", []byte("push!"), http.StatusBadRequest, `"error":"body: invalid JSON`},
		{"missing field", openRoute(registry.DockerHub), http.MethodPost, "/hooks/r", []byte(`{"push_data":{"tag":"v1"}}`), http.StatusBadRequest, `"error":"repository: required"`},
		{"wrong JSON type", openRoute(registry.DockerHub), http.MethodPost, "/hooks/r", []byte(`{"push_data":{"tag":1}}`), http.StatusBadRequest, `"error":"push_data.tag: cannot hold a JSON number"`},
		{"ping", openRoute(registry.ACR), http.MethodPost, "/hooks/r", []byte(`{"action":"ping"}`), http.StatusOK, `{"ignored":"ping"}`},
		{"body over the limit", Route{Name: "r", Format: registry.DockerHub, Auth: &Auth{Type: AuthNone}, BodyLimit: 100}, http.MethodPost, "/hooks/r", dh, http.StatusRequestEntityTooLarge, `larger than 100 bytes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _, _ := newTest(t, Config{Routes: []Route{tt.route}})
			req, _ := http.NewRequestWithContext(t.Context(), tt.method, tt.path, bytes.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			w := newRecorder()
			h.ServeHTTP(w, req)
			if w.Code != tt.want || !strings.Contains(w.Body.String(), tt.answer) {
				t.Fatalf("got %d %s; want %d with %s", w.Code, w.Body, tt.want, tt.answer)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

func TestRateLimit(t *testing.T) {
	rt := openRoute(registry.ACR)
	rt.RateLimit = &RateLimit{PerSecond: 0.01, Burst: 2}
	h, _, reg := newTest(t, Config{Routes: []Route{rt}})
	ping := []byte(`{"action":"ping"}`)
	for i := range 2 {
		if w := post(t, h, "/hooks/r", nil, ping); w.Code != http.StatusOK {
			t.Fatalf("delivery %d within the burst: %d", i, w.Code)
		}
	}
	w := post(t, h, "/hooks/r", nil, ping)
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("third delivery: %d; want 429", w.Code)
	}
	if s, err := strconv.Atoi(w.Header().Get("Retry-After")); err != nil || s < 1 || s > 100 {
		t.Errorf("Retry-After %q; want the seconds until a token (about 100)", w.Header().Get("Retry-After"))
	}
	if got := delivered(t, reg, "r", resultThrottled); got != 1 {
		t.Errorf("throttled deliveries counted %v; want 1", got)
	}
}

func TestRepeatedDeliveryHasTheSameEventID(t *testing.T) {
	for _, tc := range []struct {
		f    registry.Format
		name string
	}{{registry.DockerHub, "docs_push"}, {registry.Distribution, "v3_push"}, {registry.Quay, "docs_repo_push"}} {
		t.Run(string(tc.f), func(t *testing.T) {
			h, pub, _ := newTest(t, Config{Routes: []Route{openRoute(tc.f)}})
			g := loadGolden(t, tc.f, tc.name)
			first := post(t, h, "/hooks/r", g.header, g.body)
			second := post(t, h, "/hooks/r", g.header, g.body)
			if first.Code != http.StatusAccepted || first.Body.String() != second.Body.String() {
				t.Fatalf("answers differ: %d %s / %d %s", first.Code, first.Body, second.Code, second.Body)
			}
			ev := pub.published()
			if len(ev) != 2 || ev[0].ID() != ev[1].ID() {
				t.Fatalf("published %d events with ids %v; want the same id twice", len(ev), ids(ev))
			}
		})
	}
}

func TestPublisherFailureIs503(t *testing.T) {
	h, pub, reg := newTest(t, Config{Routes: []Route{openRoute(registry.DockerHub)}})
	pub.err = errors.New("nats: no responders available for request")
	w := post(t, h, "/hooks/r", nil, loadGolden(t, registry.DockerHub, "docs_push").body)
	if w.Code != http.StatusServiceUnavailable {
		t.Fatalf("status %d (%s); want 503 so that the registry retries", w.Code, w.Body)
	}
	if strings.Contains(w.Body.String(), "nats") {
		t.Errorf("answer leaks the bus error: %s", w.Body)
	}
	if got := delivered(t, reg, "r", resultFailed); got != 1 {
		t.Errorf("failed deliveries counted %v; want 1", got)
	}
}

func TestEnvelopeOfSeveralPushes(t *testing.T) {
	h, pub, _ := newTest(t, Config{Routes: []Route{openRoute(registry.Quay)}})
	body := []byte(`{"repository":"acme/web","docker_url":"quay.io/acme/web","updated_tags":["1.4.2","latest","1.4.2"]}`)
	w := post(t, h, "/hooks/r", nil, body)
	var ans struct {
		Events []publishedEvent `json:"events"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &ans); err != nil || w.Code != http.StatusAccepted {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	var subjects []string
	for _, e := range ans.Events {
		subjects = append(subjects, e.Subject)
	}
	if got := strings.Join(subjects, " "); got != "quay.io/acme/web:1.4.2 quay.io/acme/web:latest" {
		t.Errorf("subjects %q", got)
	}
	if len(pub.published()) != 2 {
		t.Errorf("published %d; want 2", len(pub.published()))
	}
}

func TestMetricsByRouteAndResult(t *testing.T) {
	cfg := Config{Routes: []Route{openRoute(registry.ACR), {Name: "s", Format: registry.ACR, Auth: &Auth{Type: AuthToken, Secret: &Secret{Value: "x"}}}}}
	h, _, reg := newTest(t, cfg)
	push := loadGolden(t, registry.ACR, "keel_push").body
	post(t, h, "/hooks/r", nil, push)
	post(t, h, "/hooks/r", nil, []byte(`{"action":"ping"}`))
	post(t, h, "/hooks/r", nil, []byte(`{`))
	post(t, h, "/hooks/s", nil, push)
	post(t, h, "/hooks/zzz", nil, push)
	for _, c := range []struct {
		route, result string
	}{{"r", resultAccepted}, {"r", resultIgnored}, {"r", resultRejected}, {"s", resultUnauthorized}, {unknownRoute, resultRejected}} {
		if got := delivered(t, reg, c.route, c.result); got != 1 {
			t.Errorf("%s/%s = %v; want 1", c.route, c.result, got)
		}
	}
}

// delivered reads the deliveries counter of route and result in reg.
func delivered(t *testing.T, reg *prometheus.Registry, route, result string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "inplace_receiver_deliveries_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["route"] == route && l["result"] == result {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no deliveries counter for %s/%s", route, result)
	return 0
}

func TestTwoReceiversShareTheMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	cfg := Config{Routes: []Route{openRoute(registry.ACR)}}
	var hs []*Receiver
	for range 2 {
		h, err := New(cfg, &recorder{}, Options{Metrics: reg, Logger: discard()})
		if err != nil {
			t.Fatalf("second receiver on one registry: %v", err)
		}
		hs = append(hs, h)
	}
	for _, h := range hs {
		post(t, h, "/hooks/r", nil, []byte(`{"action":"ping"}`))
	}
	if got := delivered(t, reg, "r", resultIgnored); got != 2 {
		t.Errorf("ignored = %v; want 2", got)
	}
}

// A delivery whose digest is malformed is refused with 400 naming the
// field, and nothing is published: a push is never taken without the
// digest its registry sent.
func TestMalformedDigestIsRefused(t *testing.T) {
	const digest = "sha256:79cdab9da13c4af164892fbd79a29165562d3d58abd51089477041633d5a3564"
	body := loadGolden(t, registry.Distribution, "v3_push").body
	if !bytes.Contains(body, []byte(digest)) {
		t.Fatal("the fixture's digest changed")
	}
	for _, bad := range []string{"md5:abcd", digest[:len(digest)-2], digest[:len(digest)-1] + "z"} {
		h, pub, _ := newTest(t, Config{Routes: []Route{openRoute(registry.Distribution)}})
		w := post(t, h, "/hooks/r", nil, bytes.ReplaceAll(body, []byte(digest), []byte(bad)))
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "events[0].target.digest") {
			t.Errorf("digest %q: %d %s; want 400 naming events[0].target.digest", bad, w.Code, w.Body)
		}
		if n := len(pub.published()); n != 0 {
			t.Errorf("digest %q: published %d events", bad, n)
		}
	}
}
