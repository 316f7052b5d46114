package registry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every format names its content types, and every recorded delivery's
// Content-Type is one of them.
func TestContentTypesCoverEveryFormat(t *testing.T) {
	for _, f := range Formats() {
		if len(ContentTypes(f)) == 0 {
			t.Errorf("%s: no content types", f)
		}
		if !AcceptsContentType(f, "application/json; charset=utf-8") {
			t.Errorf("%s refuses application/json", f)
		}
		for _, c := range goldenCases(t, f) {
			if _, err := os.Stat(strings.TrimSuffix(c.path, ".json") + "_request.json"); err != nil {
				continue
			}
			if ct := c.delivery(t).Header.Get("Content-Type"); ct != "" && !AcceptsContentType(f, ct) {
				t.Errorf("%s: %s was sent as %q, which the format refuses", f, filepath.Base(c.path), ct)
			}
		}
	}
	for _, ct := range []string{"", "text/plain", "application/jsonx", "application/json;;"} {
		if AcceptsContentType(Generic, ct) {
			t.Errorf("generic accepts %q", ct)
		}
	}
}
