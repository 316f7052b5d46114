package registry

import (
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/inplace-dev/inplace/events"
)

var update = flag.Bool("update", false, "rewrite the testdata/*/*_want.json golden files")

// goldenCase is testdata/<format>/<name>.json with its optional
// <name>_request.json (headers, route registry) and <name>_want.json.
type goldenCase struct {
	format Format
	name   string
	path   string
}

type caseRequest struct {
	Headers  map[string]string `json:"headers"`
	Registry string            `json:"registry"`
}

// outcome is what a golden file records.
type outcome struct {
	Pushes  []events.ImagePushedData `json:"pushes,omitempty"`
	Ignored string                   `json:"ignored,omitempty"`
	// Field and Error are set for a malformed payload.
	Field string `json:"field,omitempty"`
	Error string `json:"error,omitempty"`
}

func goldenCases(t testing.TB, f Format) []goldenCase {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", string(f), "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []goldenCase
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".json")
		if strings.HasSuffix(name, "_want") || strings.HasSuffix(name, "_request") {
			continue
		}
		out = append(out, goldenCase{format: f, name: name, path: p})
	}
	return out
}

func (c goldenCase) delivery(t testing.TB) Delivery {
	t.Helper()
	body, err := os.ReadFile(c.path)
	if err != nil {
		t.Fatal(err)
	}
	d := Delivery{Header: http.Header{}, Body: body}
	raw, err := os.ReadFile(strings.TrimSuffix(c.path, ".json") + "_request.json")
	if errors.Is(err, os.ErrNotExist) {
		return d
	}
	var req caseRequest
	if err != nil || json.Unmarshal(raw, &req) != nil {
		t.Fatalf("%s: bad _request.json: %v", c.name, err)
	}
	for k, v := range req.Headers {
		d.Header.Set(k, v)
	}
	d.Registry = req.Registry
	return d
}

func outcomeOf(r Result, err error) outcome {
	if err != nil {
		o := outcome{Error: err.Error()}
		var fe *events.FieldError
		if errors.As(err, &fe) {
			o.Field = fe.Field
		}
		return o
	}
	return outcome{Pushes: r.Pushes, Ignored: r.Ignored}
}

func TestGolden(t *testing.T) {
	for _, f := range Formats() {
		cases := goldenCases(t, f)
		accepted := 0
		for _, c := range cases {
			t.Run(string(f)+"/"+c.name, func(t *testing.T) {
				got := outcomeOf(Parse(f, c.delivery(t)))
				if len(got.Pushes) > 0 {
					accepted++
				}
				checkGolden(t, strings.TrimSuffix(c.path, ".json")+"_want.json", got)
			})
		}
		if accepted == 0 {
			t.Errorf("format %s: no golden case yields a push", f)
		}
	}
}

func checkGolden(t *testing.T, path string, got outcome) {
	t.Helper()
	if *update {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	var want outcome
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}
