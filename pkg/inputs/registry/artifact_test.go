package registry

import (
	"strings"
	"testing"
)

// The referrers tag schema's and cosign's legacy tags hold signatures and
// attestations, not images: a push of one is ignored.
func TestArtifactTagsIgnored(t *testing.T) {
	hex := strings.Repeat("ab", 32)
	for _, tag := range []string{"sha256-" + hex, "sha256-" + hex + ".sig", "sha256-" + hex + ".att"} {
		body := `{"events":[{"action":"push","target":{"mediaType":"application/vnd.oci.image.index.v1+json",` +
			`"digest":"sha256:` + hex + `","repository":"team/app","tag":"` + tag + `"},"request":{"host":"reg.example"}}]}`
		res, err := Parse(Distribution, Delivery{Body: []byte(body)})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Pushes) != 0 || !strings.Contains(res.Ignored, "signature or referrers tag") {
			t.Errorf("tag %s: pushes %v, ignored %q", tag, res.Pushes, res.Ignored)
		}
	}
	res, err := Parse(Distribution, Delivery{Body: []byte(`{"events":[{"action":"push","target":{"digest":"sha256:` + hex +
		`","repository":"team/app","tag":"sha256-release"},"request":{"host":"reg.example"}}]}`)})
	if err != nil || len(res.Pushes) != 1 {
		t.Errorf("an ordinary tag: %v %v", res, err)
	}
}
