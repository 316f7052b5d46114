package receiver

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/inplace-dev/inplace/pkg/inputs/registry"
)

// TestReplayedDeliveryIsRefused: a captured, correctly signed GitHub
// delivery is taken when it is fresh; replayed once the bus's dedup window
// (which would drop it by its event id) has passed, it is refused with the
// reason and nothing is published. So is one stamped far in the future.
func TestReplayedDeliveryIsRefused(t *testing.T) {
	pushed := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	body := []byte(`{"action":"published","package":{"name":"app","package_type":"CONTAINER","owner":{"login":"acme"},` +
		`"package_version":{"updated_at":"` + pushed.Format(time.RFC3339) + `","container_metadata":{"tag":{"name":"1.2.0",` +
		`"digest":"sha256:6c62fb45fe66bfb1ea9a66abc38f6a0cc974292b6c62fb45fe66bfb1ea9a66ab"}}}}}`)
	header := http.Header{"X-Github-Event": {"package"}, "Content-Type": {"application/json"},
		"X-Hub-Signature-256": {"sha256=" + hexHMAC("s3cret", body)}}
	cfg := Config{Routes: []Route{{Name: "r", Format: registry.GHCR,
		Auth: &Auth{Type: AuthHMAC, Secret: &Secret{Value: "s3cret"}}}}}
	tests := []struct {
		name      string
		now       time.Time
		status    int
		published int
		answer    string
	}{
		{"fresh", pushed.Add(time.Minute), http.StatusAccepted, 1, `"events":[{"id":`},
		{"replayed after the window", pushed.Add(DefaultMaxAge + time.Second), http.StatusOK, 0, "a replayed or stale delivery"},
		{"stamped in the future", pushed.Add(-time.Hour), http.StatusOK, 0, "ahead of this clock"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pub, reg := &recorder{}, prometheus.NewRegistry()
			h, err := New(cfg, pub, Options{Logger: discard(), Metrics: reg, Now: func() time.Time { return tt.now }})
			if err != nil {
				t.Fatal(err)
			}
			w := post(t, h, "/hooks/r", header, body)
			if w.Code != tt.status || !strings.Contains(w.Body.String(), tt.answer) {
				t.Errorf("got %d %s; want %d with %q", w.Code, w.Body, tt.status, tt.answer)
			}
			if n := len(pub.published()); n != tt.published {
				t.Errorf("published %d events; want %d", n, tt.published)
			}
			m, _ := h.metrics.deliveries.GetMetricWithLabelValues("r", resultStale)
			if stale := testutil.ToFloat64(m); (stale == 1) != (tt.published == 0) {
				t.Errorf("stale deliveries counted %v", stale)
			}
		})
	}
}
