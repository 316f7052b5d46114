package registry

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
)

// Each parser has its own fuzz target, seeded with its golden payloads:
//
//	go test -run='^$' -fuzz=FuzzParseHarbor -fuzztime=45s ./pkg/inputs/registry
//
// Inputs that failed are kept under testdata/fuzz/<target> and run with
// every go test.

func FuzzParseDockerHub(f *testing.F)    { fuzzFormat(f, DockerHub, nil) }
func FuzzParseDistribution(f *testing.F) { fuzzFormat(f, Distribution, nil) }
func FuzzParseHarbor(f *testing.F)       { fuzzFormat(f, Harbor, nil) }
func FuzzParseQuay(f *testing.F)         { fuzzFormat(f, Quay, nil) }
func FuzzParseACR(f *testing.F)          { fuzzFormat(f, ACR, nil) }
func FuzzParseGAR(f *testing.F)          { fuzzFormat(f, GAR, nil) }
func FuzzParseECR(f *testing.F)          { fuzzFormat(f, ECR, nil) }
func FuzzParseJFrog(f *testing.F)        { fuzzFormat(f, JFrog, nil) }
func FuzzParseCDEvents(f *testing.F)     { fuzzFormat(f, CDEvents, nil) }
func FuzzParseGeneric(f *testing.F)      { fuzzFormat(f, Generic, nil) }

func FuzzParseGHCR(f *testing.F) {
	fuzzFormat(f, GHCR, http.Header{"X-Github-Event": {"package"}})
}

func FuzzParseGitea(f *testing.F) {
	fuzzFormat(f, Gitea, http.Header{"X-Gitea-Event": {"package"}})
}

// fuzzFormat feeds bodies (and a route registry) to format fm and checks
// that nothing panics and that whatever is accepted is a valid event.
func fuzzFormat(f *testing.F, fm Format, h http.Header) {
	for _, c := range goldenCases(f, fm) {
		body, err := os.ReadFile(c.path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body, "")
	}
	f.Add([]byte(`{}`), "registry.example.com:5000/mirror")
	f.Fuzz(func(t *testing.T, body []byte, registry string) {
		r, err := Parse(fm, Delivery{Header: h, Body: body, Registry: registry})
		if err != nil {
			checkError(t, err)
			return
		}
		checkResult(t, fm, r)
	})
}

func checkError(t *testing.T, err error) {
	t.Helper()
	var fe *events.FieldError
	if !errors.As(err, &fe) || fe.Field == "" {
		t.Fatalf("error %v is not a *events.FieldError naming a field", err)
	}
}

func checkResult(t *testing.T, fm Format, r Result) {
	t.Helper()
	if (len(r.Pushes) == 0) != (r.Ignored != "") {
		t.Fatalf("pushes %d with ignored %q: exactly one of them must be set", len(r.Pushes), r.Ignored)
	}
	seen := map[string]bool{}
	for _, d := range r.Pushes {
		if err := d.Validate(); err != nil {
			t.Fatalf("push %+v does not validate: %v", d, err)
		}
		if d.Origin != string(fm) {
			t.Fatalf("origin %q, want %q", d.Origin, fm)
		}
		if _, err := json.Marshal(d); err != nil {
			t.Fatalf("push %+v does not marshal: %v", d, err)
		}
		if id := events.PushID(d); seen[id] {
			t.Fatalf("push %+v returned twice", d)
		} else {
			seen[id] = true
		}
		checkCanonical(t, d)
	}
}

// checkCanonical: a reference whose host imageref recognises as a host
// parses back to itself.
func checkCanonical(t *testing.T, d events.ImagePushedData) {
	t.Helper()
	if !strings.ContainsAny(d.Registry, ".:") && d.Registry != "localhost" {
		return
	}
	r, err := imageref.Parse(d.Ref())
	if err != nil {
		t.Fatalf("ref %q does not parse: %v", d.Ref(), err)
	}
	if r.Registry != d.Registry || r.Repository != d.Repository || r.Tag != d.Tag || r.Digest != d.Digest {
		t.Fatalf("ref %q parses to %+v, not canonical", d.Ref(), r)
	}
}
