package receiver

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/pkg/inputs/registry"
)

// postFrom posts as the client at addr (host:port).
func postFrom(t *testing.T, h http.Handler, addr string, header http.Header, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/hooks/r", strings.NewReader(string(body)))
	req.RemoteAddr = addr
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func tokenRoute() Route {
	return Route{Name: "r", Format: registry.DockerHub, Auth: &Auth{Type: AuthToken, Secret: &Secret{Value: "genuine"}}}
}

// 150 forged deliveries do not use up the route's rate limit: the next
// genuine delivery is accepted (the registry would not deliver again after
// a 429), and the forger is held off by its own limit.
func TestForgedDeliveriesDoNotThrottleGenuineOnes(t *testing.T) {
	h, pub, reg := newTest(t, Config{Routes: []Route{tokenRoute()}})
	body := loadGolden(t, registry.DockerHub, "docs_push").body
	codes := map[int]int{}
	for range 150 {
		codes[postFrom(t, h, "203.0.113.9:4000", http.Header{"Authorization": {"forged"}}, body).Code]++
	}
	burst := DefaultAuthFailures.Burst
	if codes[http.StatusUnauthorized] != burst || codes[http.StatusTooManyRequests] != 150-burst {
		t.Errorf("forged deliveries answered %v; want %d × 401 then 429", codes, burst)
	}
	w := postFrom(t, h, "198.51.100.7:5000", http.Header{"Authorization": {"genuine"}}, body)
	if w.Code != http.StatusAccepted || len(pub.published()) != 1 {
		t.Fatalf("the genuine delivery after the flood: %d %s; want 202", w.Code, w.Body)
	}
	if got := delivered(t, reg, "r", resultBlocked); got != 150-float64(burst) {
		t.Errorf("blocked deliveries counted %v", got)
	}

	// Even with no limit on failures, forged deliveries are refused before
	// the route's rate limit is consulted.
	h, pub, _ = newTest(t, Config{Routes: []Route{tokenRoute()}, AuthFailures: &RateLimit{PerSecond: 1000, Burst: 1000}})
	for i := range 150 {
		if w := postFrom(t, h, "203.0.113.9:4000", http.Header{"Authorization": {"forged"}}, body); w.Code != http.StatusUnauthorized {
			t.Fatalf("forged delivery %d: %d", i, w.Code)
		}
	}
	if w := postFrom(t, h, "198.51.100.7:5000", http.Header{"Authorization": {"genuine"}}, body); w.Code != http.StatusAccepted || len(pub.published()) != 1 {
		t.Fatalf("the genuine delivery after 150 forged ones: %d %s; want 202", w.Code, w.Body)
	}
}

// A client that failed to authenticate too often has its failures answered
// 429 until its bucket refills; a delivery from the same address that
// authenticates is accepted and takes nothing from the bucket (a registry
// behind a NAT or an ingress shared with junk senders). Behind a trusted
// proxy the client is the X-Forwarded-For address; an untrusted peer's
// X-Forwarded-For is not believed.
func TestFailedAuthenticationsAreLimitedPerClient(t *testing.T) {
	cfg := Config{Routes: []Route{tokenRoute()}, AuthFailures: &RateLimit{PerSecond: 0.5, Burst: 2},
		TrustedProxies: []string{"10.0.0.0/8"}}
	h, pub, _ := newTest(t, cfg)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	h.clients.now = func() time.Time { return now }
	body := loadGolden(t, registry.DockerHub, "docs_push").body
	via := func(client string) http.Header {
		return http.Header{"X-Forwarded-For": {"192.0.2.55, " + client}}
	}
	forged, genuine := http.Header{"Authorization": {"x"}}, http.Header{"Authorization": {"genuine"}}
	with := func(a, b http.Header) http.Header {
		out := a.Clone()
		for k, v := range b {
			out[k] = v
		}
		return out
	}
	for i := range 2 {
		if w := postFrom(t, h, "10.1.2.3:443", with(via("203.0.113.9"), forged), body); w.Code != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d", i, w.Code)
		}
	}
	w := postFrom(t, h, "10.1.2.3:443", with(via("203.0.113.9"), forged), body)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "2" {
		t.Fatalf("blocked client: %d Retry-After %q; want 429 after 2s", w.Code, w.Header().Get("Retry-After"))
	}
	for i := range 3 {
		if w := postFrom(t, h, "10.1.2.3:443", with(via("203.0.113.9"), genuine), body); w.Code != http.StatusAccepted {
			t.Fatalf("genuine delivery %d from the blocked address: %d %s; want 202", i, w.Code, w.Body)
		}
	}
	if got := ids(pub.published()); len(got) != 3 || got[0] != got[1] || got[1] != got[2] {
		t.Errorf("published %v; want the one push three times (the stream drops the repeats by id)", got)
	}
	if w := postFrom(t, h, "10.1.2.3:443", with(via("203.0.113.9"), forged), body); w.Code != http.StatusTooManyRequests {
		t.Fatalf("the genuine deliveries refilled the junk sender's bucket: %d", w.Code)
	}
	if w := postFrom(t, h, "10.1.2.3:443", with(via("198.51.100.7"), forged), body); w.Code != http.StatusUnauthorized {
		t.Fatalf("another client behind the same proxy: %d %s", w.Code, w.Body)
	}
	if w := postFrom(t, h, "203.0.113.9:1", with(via("198.51.100.7"), forged), body); w.Code != http.StatusTooManyRequests {
		t.Fatalf("an untrusted peer's X-Forwarded-For was believed: %d", w.Code)
	}
	now = now.Add(2 * time.Second)
	if w := postFrom(t, h, "10.1.2.3:443", with(via("203.0.113.9"), forged), body); w.Code != http.StatusUnauthorized {
		t.Fatalf("after the bucket refilled: %d %s", w.Code, w.Body)
	}
}

// --trusted-proxies replaces the config's trustedProxies: behind a proxy of
// the flag, the client is the X-Forwarded-For address; the config's proxy
// is then an ordinary peer. A malformed entry stops the receiver, named.
func TestTrustedProxiesFromTheFlag(t *testing.T) {
	cfg := Config{Routes: []Route{tokenRoute()}, AuthFailures: &RateLimit{PerSecond: 0.01, Burst: 1},
		TrustedProxies: []string{"10.0.0.0/8"}}
	h, err := New(cfg, &recorder{}, Options{Logger: discard(), MaxAge: fixturesAge, TrustedProxies: []string{"192.168.7.0/24", " 2001:db8::1 "}})
	if err != nil {
		t.Fatal(err)
	}
	forged := func(peer, xff string) int {
		return postFrom(t, h, peer, http.Header{"Authorization": {"x"}, "X-Forwarded-For": {xff}},
			loadGolden(t, registry.DockerHub, "docs_push").body).Code
	}
	if got := forged("192.168.7.4:443", "203.0.113.9"); got != http.StatusUnauthorized {
		t.Fatalf("first failure: %d", got)
	}
	for _, tc := range []struct {
		peer, xff string
		want      int
	}{
		{"192.168.7.4:443", "203.0.113.9", http.StatusTooManyRequests}, // the same client, behind the flag's proxy
		{"[2001:db8::1]:443", "203.0.113.9", http.StatusTooManyRequests},
		{"192.168.7.4:443", "198.51.100.7", http.StatusUnauthorized}, // another client
		{"10.1.2.3:443", "203.0.113.9", http.StatusUnauthorized},     // the config's proxy is a client now
		{"10.1.2.3:443", "198.51.100.8", http.StatusTooManyRequests},
	} {
		if got := forged(tc.peer, tc.xff); got != tc.want {
			t.Errorf("from %s for %s: %d; want %d", tc.peer, tc.xff, got, tc.want)
		}
	}
	_, err = New(cfg, &recorder{}, Options{Logger: discard(), TrustedProxies: []string{"10.0.0.0/33"}})
	if err == nil || !strings.Contains(err.Error(), "--trusted-proxies[0]") {
		t.Errorf("a malformed --trusted-proxies: %v; want it named", err)
	}
}

// A client that sends its body slowly is answered 408 once the read
// timeout passes, not held open.
func TestSlowBodyIsCutOff(t *testing.T) {
	h, pub, _ := newTest(t, Config{Routes: []Route{openRoute(registry.DockerHub)}, ReadTimeout: Duration{300 * time.Millisecond}})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = conn.Write([]byte("POST /hooks/r HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"push_data\":"))
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute)) // a bound for the test, not the assertion
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer while the body trickles: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || len(pub.published()) != 0 {
		t.Fatalf("status %d; want 408", resp.StatusCode)
	}
}

// One delivery may not fan out into more events than the route allows.
func TestImagesPerDeliveryAreCapped(t *testing.T) {
	body := loadGolden(t, registry.Generic, "images").body // three images
	for _, tc := range []struct {
		max  int
		want int
	}{{2, http.StatusRequestEntityTooLarge}, {3, http.StatusAccepted}} {
		t.Run(strconv.Itoa(tc.max), func(t *testing.T) {
			rt := openRoute(registry.Generic)
			rt.MaxImages = tc.max
			h, pub, _ := newTest(t, Config{Routes: []Route{rt}})
			w := post(t, h, "/hooks/r", nil, body)
			if w.Code != tc.want {
				t.Fatalf("%d %s; want %d", w.Code, w.Body, tc.want)
			}
			if published := len(pub.published()); (tc.want == http.StatusAccepted) != (published == 3) || published%3 != 0 {
				t.Errorf("published %d events", published)
			}
			if tc.want != http.StatusAccepted && !strings.Contains(w.Body.String(), "names 3 images; this route takes at most 2") {
				t.Errorf("answer %s", w.Body)
			}
		})
	}
}

// Each format takes only the content types its senders use.
func TestContentTypesPerFormat(t *testing.T) {
	tests := []struct {
		format registry.Format
		golden string
		ct     string
		want   int
	}{
		{registry.DockerHub, "docs_push", "application/json; charset=utf-8", http.StatusAccepted},
		{registry.DockerHub, "docs_push", "text/plain", http.StatusUnsupportedMediaType},
		{registry.DockerHub, "docs_push", "", http.StatusUnsupportedMediaType},
		{registry.DockerHub, "docs_push", "application/x-www-form-urlencoded", http.StatusUnsupportedMediaType},
		{registry.Distribution, "v3_push", "application/vnd.docker.distribution.events.v2+json", http.StatusAccepted},
		{registry.Distribution, "gitlab_push_keel", "application/vnd.docker.distribution.events.v1+json", http.StatusAccepted},
		{registry.Distribution, "v3_push", "application/xml", http.StatusUnsupportedMediaType},
		{registry.CDEvents, "cdevents_artifact_published_v04", "application/cloudevents+json", http.StatusAccepted},
		{registry.Generic, "image", "multipart/form-data; boundary=x", http.StatusUnsupportedMediaType},
	}
	for _, tt := range tests {
		t.Run(string(tt.format)+" "+tt.ct, func(t *testing.T) {
			h, pub, _ := newTest(t, Config{Routes: []Route{openRoute(tt.format)}})
			w := post(t, h, "/hooks/r", http.Header{"Content-Type": {tt.ct}}, loadGolden(t, tt.format, tt.golden).body)
			if w.Code != tt.want {
				t.Fatalf("%d %s; want %d", w.Code, w.Body, tt.want)
			}
			if tt.want == http.StatusUnsupportedMediaType && (len(pub.published()) != 0 || !strings.Contains(w.Body.String(), "is not one of")) {
				t.Errorf("answer %s, published %d", w.Body, len(pub.published()))
			}
		})
	}
}

// GitHub's signature header is "sha256=<hex>": the right HMAC without its
// prefix is refused.
func TestSignatureNeedsItsPrefix(t *testing.T) {
	h, pub, _ := newTest(t, Config{Routes: []Route{{Name: "r", Format: registry.GHCR, Auth: &Auth{Type: AuthHMAC, Secret: &Secret{Value: "k"}}}}})
	g := loadGolden(t, registry.GHCR, "keel_package_tagged")
	sig := hexHMAC("k", g.body)
	for _, tc := range []struct {
		value string
		want  int
	}{{sig, http.StatusUnauthorized}, {"sha1=" + sig, http.StatusUnauthorized}, {"sha256=" + sig, http.StatusAccepted}} {
		hdr := g.header.Clone()
		hdr.Set("X-Hub-Signature-256", tc.value)
		if w := post(t, h, "/hooks/r", hdr, g.body); w.Code != tc.want {
			t.Errorf("signature %.12s…: %d %s; want %d", tc.value, w.Code, w.Body, tc.want)
		}
	}
	if n := len(pub.published()); n != 1 {
		t.Errorf("published %d; want 1 (the prefixed signature only)", n)
	}
}
