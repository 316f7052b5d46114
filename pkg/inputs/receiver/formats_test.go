package receiver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/inputs/registry"
)

// goldenDir holds pkg/inputs/registry's public payloads and expected pushes.
const goldenDir = "../registry/testdata"

type golden struct {
	body    []byte
	header  http.Header
	reg     string
	want    []events.ImagePushedData
	ignored string
	field   string
}

// loadGolden reads testdata/<format>/<name>.json and its companions.
func loadGolden(t *testing.T, f registry.Format, name string) golden {
	t.Helper()
	base := filepath.Join(goldenDir, string(f), name)
	body, err := os.ReadFile(base + ".json")
	if err != nil {
		t.Fatal(err)
	}
	g := golden{body: body, header: http.Header{}}
	var req struct {
		Headers  map[string]string `json:"headers"`
		Registry string            `json:"registry"`
	}
	if raw, err := os.ReadFile(base + "_request.json"); err == nil {
		if err := json.Unmarshal(raw, &req); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range req.Headers {
		g.header.Set(k, v)
	}
	g.reg = req.Registry
	var want struct {
		Pushes  []events.ImagePushedData `json:"pushes"`
		Ignored string                   `json:"ignored"`
		Field   string                   `json:"field"`
	}
	raw, err := os.ReadFile(base + "_want.json")
	if err != nil || json.Unmarshal(raw, &want) != nil {
		t.Fatalf("%s_want.json: %v", base, err)
	}
	g.want, g.ignored, g.field = want.Pushes, want.Ignored, want.Field
	return g
}

// goldenNames lists a format's cases.
func goldenNames(t *testing.T, f registry.Format) []string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(goldenDir, string(f), "*.json"))
	var out []string
	for _, p := range paths {
		n := strings.TrimSuffix(filepath.Base(p), ".json")
		if !strings.HasSuffix(n, "_want") && !strings.HasSuffix(n, "_request") {
			out = append(out, n)
		}
	}
	return out
}

// TestEveryFormatThroughHTTP posts every public payload of every format to
// a real HTTP server and checks the answer and the events published.
func TestEveryFormatThroughHTTP(t *testing.T) {
	for _, f := range registry.Formats() {
		for _, name := range goldenNames(t, f) {
			t.Run(string(f)+"/"+name, func(t *testing.T) {
				g := loadGolden(t, f, name)
				cfg := Config{Routes: []Route{{Name: "r", Format: f, Registry: g.reg, Auth: &Auth{Type: AuthNone}}}}
				h, pub, _ := newTest(t, cfg)
				srv := httptest.NewServer(h)
				t.Cleanup(srv.Close)
				status, body := httpPost(t, srv.URL+"/hooks/r", g.header, g.body)
				checkAnswer(t, g, status, body, pub)
			})
		}
	}
}

func httpPost(t *testing.T, url string, header http.Header, body []byte) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header.Clone()
	if req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("answer %q is not JSON: %v", raw, err)
	}
	return resp.StatusCode, out
}

func checkAnswer(t *testing.T, g golden, status int, body map[string]any, pub *recorder) {
	t.Helper()
	switch {
	case g.field != "":
		if status != http.StatusBadRequest || !strings.HasPrefix(body["error"].(string), g.field+":") {
			t.Fatalf("got %d %v; want 400 naming %s", status, body, g.field)
		}
	case g.ignored != "":
		if status != http.StatusOK || body["ignored"] != g.ignored {
			t.Fatalf("got %d %v; want 200 ignored %q", status, body, g.ignored)
		}
	default:
		if status != http.StatusAccepted {
			t.Fatalf("got %d %v; want 202", status, body)
		}
		if n := len(body["events"].([]any)); n != len(g.want) {
			t.Errorf("answer lists %d events; want %d", n, len(g.want))
		}
	}
	checkEvents(t, pub, g.want)
}

// checkEvents: one image.pushed per push, with the push's id and subject.
func checkEvents(t *testing.T, pub *recorder, want []events.ImagePushedData) {
	t.Helper()
	got := pub.published()
	if len(got) != len(want) {
		t.Fatalf("published %d events; want %d", len(got), len(want))
	}
	for i, e := range got {
		d, err := events.As[events.ImagePushedData](e)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if diff := cmp.Diff(want[i], d); diff != "" {
			t.Errorf("event %d data (-want +got):\n%s", i, diff)
		}
		if e.ID() != events.PushID(d) || e.Type() != events.ImagePushed || e.Subject() != d.Ref() || e.Source() != events.Source("receiver") {
			t.Errorf("event %d: id %s type %s subject %s source %s", i, e.ID(), e.Type(), e.Subject(), e.Source())
		}
	}
}
