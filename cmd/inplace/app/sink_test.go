package app_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/settle"
)

func TestSinkPublisherSettlement(t *testing.T) {
	tests := []struct {
		status int
		want   settle.Kind
	}{
		{http.StatusAccepted, settle.Done},
		{http.StatusOK, settle.Done},
		{http.StatusBadRequest, settle.Fail},
		{http.StatusUnprocessableEntity, settle.Fail},
		{http.StatusNotFound, settle.Retry}, // a Broker not ready yet
		{http.StatusTooManyRequests, settle.Retry},
		{http.StatusInternalServerError, settle.Retry},
		{http.StatusServiceUnavailable, settle.Retry},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			ids := make(chan string, 10)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ids <- r.Header.Get("Ce-Id")
				w.WriteHeader(tt.status)
			}))
			defer srv.Close()
			p, err := app.NewSinkPublisher(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			e, err := events.New("id-1", events.ImagePushed, events.Source("test"), "s",
				events.ImagePushedData{Registry: "r.example", Repository: "a/b", Tag: "1", Origin: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if kind, _ := settle.Classify(p.Publish(t.Context(), e)); kind != tt.want {
				t.Errorf("settlement %s, want %s", kind, tt.want)
			}
			if got := <-ids; got != "id-1" {
				t.Errorf("the sink saw id %q in binary mode, want id-1", got)
			}
		})
	}
}

func TestSinkPublisherNeedsATarget(t *testing.T) {
	if _, err := app.NewSinkPublisher(""); err == nil {
		t.Fatal("an empty K_SINK was accepted")
	}
}

// TestSinkPublisherSendsTheBindingsToken: where the SinkBinding mounts a
// token (authentication-oidc on), every send carries the file's current
// content as a bearer token; without the file, none.
func TestSinkPublisherSendsTheBindingsToken(t *testing.T) {
	auth := make(chan string, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth <- r.Header.Get("Authorization")
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "token")
	p, err := app.NewSinkPublisher(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	p.WithTokenFile(file)
	e, err := events.New("id-1", events.ImagePushed, events.Source("test"), "s",
		events.ImagePushedData{Registry: "r.example", Repository: "a/b", Tag: "1", Origin: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ file, want string }{{"", ""}, {"tok-1\n", "Bearer tok-1"}, {"tok-2", "Bearer tok-2"}} {
		if tt.file != "" {
			if err := os.WriteFile(file, []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Publish(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		if got := <-auth; got != tt.want {
			t.Errorf("token file %q: Authorization %q, want %q", tt.file, got, tt.want)
		}
	}
}
