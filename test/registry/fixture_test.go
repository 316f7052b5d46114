package registry

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/distribution_v3_*.json from a live capture")

// TestFixtures captures real notification bodies and checks that the golden
// fixtures in testdata still have their shape (same keys, same stable
// values); with -update it rewrites them.
func TestFixtures(t *testing.T) {
	live := captureFixtures(t)
	for file, body := range live {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join("testdata", file)
			if *update {
				if err := os.WriteFile(path, append(body, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			golden, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read fixture (regenerate with -update): %v", err)
			}
			if diff := cmp.Diff(shape(t, golden), shape(t, body)); diff != "" {
				t.Errorf("%s no longer matches what Distribution sends (-fixture +live):\n%s", path, diff)
			}
		})
	}
}

// captureFixtures runs a push, a multi-arch push and a tag delete against a
// real registry and returns one POST body per fixture file.
func captureFixtures(t *testing.T) map[string][]byte {
	rec := newRecorder(t, nil)
	n := Notify{URL: rec.URL(), Headers: bearer("fixture-token"), IgnoreActions: []string{"pull"}}
	r := start(t, n)
	ctx := t.Context()
	app, err := r.Push(ctx, "team/app", "v1.2.3")
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	isApp := manifestPush("team/app", "v1.2.3", app)
	isBlob := func(e event) bool {
		return e.Target.Repository == "team/app" && e.Target.MediaType == "application/octet-stream"
	}
	posts := rec.waitFor(func(ps []post) bool { return count(ps, isApp) == 1 && count(ps, isBlob) == 2 })
	out := map[string][]byte{
		"distribution_v3_push.json":      body(posts, isApp),
		"distribution_v3_push_blob.json": body(posts, isBlob),
	}

	n.IncludeReferences = true
	if err := r.SetNotify(n); err != nil {
		t.Fatalf("SetNotify: %v", err)
	}
	multi, err := r.Push(ctx, "team/multi", "v2.0.0", WithPlatforms("linux/amd64", "linux/arm64"), WithOCI())
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	isIndex := manifestPush("team/multi", "v2.0.0", multi)
	isChild := func(e event) bool {
		return e.Target.Repository == "team/multi" && e.Target.MediaType == "application/vnd.oci.image.manifest.v1+json"
	}
	posts = rec.waitFor(func(ps []post) bool { return count(ps, isIndex) == 1 && count(ps, isChild) == 2 })
	out["distribution_v3_push_index.json"] = body(posts, isIndex)
	out["distribution_v3_push_index_child.json"] = body(posts, isChild)

	if err := r.Delete(ctx, "team/app", "v1.2.3"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	isDelete := func(e event) bool { return e.Action == "delete" && e.Target.Tag == "v1.2.3" }
	posts = rec.waitFor(func(ps []post) bool { return count(ps, isDelete) == 1 })
	out["distribution_v3_delete_tag.json"] = body(posts, isDelete)
	return out
}

// body returns the raw body of the first POST holding an event that matches.
func body(posts []post, match func(event) bool) []byte {
	p, _, _ := find(posts, match)
	return p.body
}

// volatile keys hold values that change on every capture.
var volatile = map[string]bool{
	"id": true, "timestamp": true, "digest": true, "size": true, "length": true,
	"url": true, "addr": true, "host": true, "instanceID": true,
}

// shape decodes a notification body and replaces every volatile value by a
// placeholder naming its JSON type, keeping keys and stable values.
func shape(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return blank(v, "")
}

func blank(v any, key string) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = blank(x, k)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = blank(x, key)
		}
		return out
	case string:
		if volatile[key] {
			return "<string>"
		}
	case float64:
		if volatile[key] {
			return "<number>"
		}
	}
	return v
}
