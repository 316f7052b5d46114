package templatesync

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The history of previous images is kept, newest first and bounded (before:
// only the latest previous image). The single entry older versions wrote
// is read as the first of the history; a repeated sync of one upgrade
// replaces its own entry.
func TestPreviousImagesHistory(t *testing.T) {
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	raw := `{"upgradeID":"u-0","images":{"app":"shop:0.9"},"syncedAt":"2026-05-01T09:00:00Z"}`
	for i := 1; i <= MaxPreviousImages+3; i++ {
		var err error
		raw, err = withPrevious(raw, Previous{UpgradeID: fmt.Sprintf("u-%d", i), Images: map[string]string{"app": fmt.Sprintf("shop:1.%d", i-1)}, SyncedAt: at})
		if err != nil {
			t.Fatal(err)
		}
	}
	raw, _ = withPrevious(raw, Previous{UpgradeID: fmt.Sprintf("u-%d", MaxPreviousImages+3), Images: map[string]string{"app": "shop:1.12"}, SyncedAt: at})
	list, err := ParsePrevious(raw)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range list {
		ids = append(ids, p.UpgradeID)
	}
	want := []string{"u-13", "u-12", "u-11", "u-10", "u-9", "u-8", "u-7", "u-6", "u-5", "u-4"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	old, err := ParsePrevious(`{"upgradeID":"u-0","images":{"app":"shop:0.9"},"syncedAt":"2026-05-01T09:00:00Z"}`)
	if err != nil || len(old) != 1 || old[0].Images["app"] != "shop:0.9" {
		t.Errorf("the old single entry: %+v, %v", old, err)
	}
}

// The template's reference style: tag@digest as the pods run it (the
// default), or the tag alone, as a manifest in Git says it.
func TestTemplateReferenceStyle(t *testing.T) {
	images := map[string]string{"app": "reg.example/shop:1.1@sha256:abc", "pinned": "reg.example/shop@sha256:abc",
		"port": "localhost:5000/shop:1.1@sha256:abc", "plain": "reg.example/shop:1.1"}
	if diff := cmp.Diff(images, styled(images, "tag@digest")); diff != "" {
		t.Errorf("tag@digest changed the images (-want +got):\n%s", diff)
	}
	want := map[string]string{"app": "reg.example/shop:1.1", "pinned": "reg.example/shop@sha256:abc",
		"port": "localhost:5000/shop:1.1", "plain": "reg.example/shop:1.1"}
	if diff := cmp.Diff(want, styled(images, "tag")); diff != "" {
		t.Errorf("tag (-want +got):\n%s", diff)
	}
}
