package probe

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestService: /counts answers the running counts, /stop the final ones,
// after which nothing more is sent.
func TestService(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer target.Close()
	p, err := New(target.URL, 200, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s := Start(t.Context(), p)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	var running Counts
	for running.OK < 3 {
		running = call(t, http.MethodGet, srv.URL+"/counts")
	}
	final := call(t, http.MethodPost, srv.URL+"/stop")
	if final.OK < running.OK || final.InFlight() != 0 || final.Failed != 0 {
		t.Errorf("final %+v after running %+v: want no fewer ok, none in flight, no failures", final, running)
	}
	if again := call(t, http.MethodGet, srv.URL+"/counts"); again.Sent != final.Sent {
		t.Errorf("sent %d after stop, %d at stop", again.Sent, final.Sent)
	}
}

func call(t *testing.T, method, url string) Counts {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c Counts
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatalf("%s %s: %d: %v", method, url, resp.StatusCode, err)
	}
	return c
}
