package e2e_test

import "testing"

// The backwards check itself: it must see a tag@digest image go back.
func TestPatchedBackwardsSeesDigestPinnedImages(t *testing.T) {
	const d = "@sha256:0123456789012345678901234567890123456789012345678901234567890123"
	ok := map[string][]string{"p": {"r:5000/ns/web:3.0.0", "r:5000/ns/web:3.1.0" + d, "r:5000/ns/web:3.2.0" + d}}
	back := map[string][]string{"p": {"r:5000/ns/web:3.0.0", "r:5000/ns/web:3.2.0" + d, "r:5000/ns/web:3.1.0" + d}}
	unknown := map[string][]string{"p": {"r:5000/ns/web:3.0.0", "r:5000/ns/web:9.9.9" + d}}
	tags := []string{"3.0.0", "3.1.0", "3.2.0"}
	if got := patchedBackwards(ok, tags...); len(got) != 0 {
		t.Errorf("forwards reported: %v", got)
	}
	if got := patchedBackwards(back, tags...); len(got) != 1 {
		t.Errorf("3.2.0 → 3.1.0 not reported")
	}
	if got := patchedBackwards(unknown, tags...); len(got) != 1 {
		t.Errorf("an unknown tag not reported")
	}
}
