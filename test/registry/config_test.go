package registry

import (
	"net/http"
	"testing"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/google/go-cmp/cmp"
)

func TestAppConfigEndpoints(t *testing.T) {
	tests := []struct {
		name string
		n    Notify
		want []configuration.Endpoint
	}{
		{name: "no url, no endpoint", n: Notify{Headers: bearer("x")}},
		{
			name: "defaults",
			n:    Notify{URL: "http://127.0.0.1:1/hook"},
			want: []configuration.Endpoint{{
				Name: endpointName, URL: "http://127.0.0.1:1/hook",
				Timeout: DefaultNotifyTimeout, Threshold: DefaultNotifyThreshold, Backoff: DefaultNotifyBackoff,
			}},
		},
		{
			name: "explicit",
			n: Notify{
				URL: "http://127.0.0.1:1/hook", Headers: bearer("t"), Timeout: time.Second,
				Threshold: 7, Backoff: time.Millisecond, IgnoreActions: []string{"pull"},
			},
			want: []configuration.Endpoint{{
				Name: endpointName, URL: "http://127.0.0.1:1/hook", Headers: http.Header{"Authorization": {"Bearer t"}},
				Timeout: time.Second, Threshold: 7, Backoff: time.Millisecond,
				Ignore: configuration.Ignore{Actions: []string{"pull"}},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := appConfig("127.0.0.1:5000", "store-id", "secret", tt.n)
			if diff := cmp.Diff(tt.want, cfg.Notifications.Endpoints); diff != "" {
				t.Errorf("endpoints (-want +got):\n%s", diff)
			}
			if got, want := cfg.HTTP.Host, "http://127.0.0.1:5000"; got != want {
				t.Errorf("HTTP.Host = %q, want %q", got, want)
			}
			if got := cfg.Storage.Type(); got != storeDriver {
				t.Errorf("storage type = %q, want %q", got, storeDriver)
			}
		})
	}
}
