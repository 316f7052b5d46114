package registry

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// eventsMediaType is the envelope media type of Distribution v3.
const eventsMediaType = "application/vnd.docker.distribution.events.v2+json"

const dockerManifest = "application/vnd.docker.distribution.manifest.v2+json"

func bearer(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}

func manifestPush(repo, tag, digest string) func(event) bool {
	return func(e event) bool {
		return e.Action == "push" && e.Target.Repository == repo && e.Target.Tag == tag && e.Target.Digest == digest
	}
}

func TestNotifyPush(t *testing.T) {
	rec := newRecorder(t, nil)
	r := start(t, Notify{URL: rec.URL(), Headers: bearer("s3cret")})
	digest, err := r.Push(t.Context(), "team/app", "v1", WithLayers(2))
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	isManifest := manifestPush("team/app", "v1", digest)
	isBlob := func(e event) bool {
		return e.Action == "push" && e.Target.Tag == "" && e.Target.Repository == "team/app"
	}
	posts := rec.waitFor(func(ps []post) bool { return count(ps, isManifest) == 1 && count(ps, isBlob) >= 3 })
	t.Logf("events of one push:%s", summary(posts))

	p, e, _ := find(posts, isManifest)
	if got := p.header.Get("Content-Type"); got != eventsMediaType {
		t.Errorf("Content-Type = %q, want %q", got, eventsMediaType)
	}
	if got := p.header.Get("Authorization"); got != "Bearer s3cret" {
		t.Errorf("Authorization = %q, want the configured header", got)
	}
	want := event{Action: "push"}
	want.Target.MediaType = dockerManifest
	want.Target.Repository = "team/app"
	want.Target.Tag = "v1"
	want.Target.Digest = digest
	want.Target.URL = "http://" + r.Host() + "/v2/team/app/manifests/" + digest
	want.Request.Host = r.Host()
	want.Request.Method = http.MethodPut
	if diff := cmp.Diff(want, e, cmpEventCore); diff != "" {
		t.Errorf("manifest push event (-want +got):\n%s", diff)
	}
	// Two layers and the config: one untagged blob push each, no other kind.
	if got := count(posts, isBlob); got != 3 {
		t.Errorf("blob push events = %d, want 3 (2 layers + config)", got)
	}
	if got, want := len(posts), 4; got != want {
		t.Errorf("%d POSTs for one push, want %d (one event per POST):%s", got, want, summary(posts))
	}
}

// cmpEventCore compares events ignoring the per-event id, time, size,
// request id and references.
var cmpEventCore = cmp.Transformer("core", func(e event) event {
	e.ID, e.Timestamp, e.Request.ID = "", "", ""
	e.Target.Size, e.Target.References = 0, nil
	return e
})

func TestNotifyIndexPush(t *testing.T) {
	rec := newRecorder(t, nil)
	r := start(t, Notify{URL: rec.URL(), IncludeReferences: true, IgnoreActions: []string{"pull"}})
	digest, err := r.Push(t.Context(), "team/multi", "v2", WithPlatforms("linux/amd64", "linux/arm64"))
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	children := childDigests(t, r, "team/multi:v2")
	isIndex := manifestPush("team/multi", "v2", digest)
	isChild := func(e event) bool {
		return e.Action == "push" && e.Target.Tag == "" && e.Target.MediaType == dockerManifest
	}
	posts := rec.waitFor(func(ps []post) bool { return count(ps, isIndex) == 1 && count(ps, isChild) == 2 })
	t.Logf("events of one multi-arch push:%s", summary(posts))

	_, idx, _ := find(posts, isIndex)
	if got, want := idx.Target.MediaType, "application/vnd.docker.distribution.manifest.list.v2+json"; got != want {
		t.Errorf("index event media type = %q, want %q", got, want)
	}
	var refs, pushed []string
	for _, ref := range idx.Target.References {
		refs = append(refs, ref.Digest)
	}
	for _, p := range posts {
		for _, e := range p.events {
			if isChild(e) {
				pushed = append(pushed, e.Target.Digest)
			}
		}
	}
	if diff := cmp.Diff(children, refs); diff != "" {
		t.Errorf("index event references (-children +refs):\n%s", diff)
	}
	if diff := cmp.Diff(children, pushed, sortStrings); diff != "" {
		t.Errorf("untagged child manifest pushes (-children +pushed):\n%s", diff)
	}
}

// childDigests lists the manifests of the index at repo:tag, read directly.
func childDigests(t *testing.T, r *Registry, repoTag string) []string {
	t.Helper()
	ref, err := name.ParseReference(r.Host() + "/" + repoTag)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	idx, err := remote.Index(ref, remote.WithContext(t.Context()))
	if err != nil {
		t.Fatalf("read index: %v", err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatalf("read index: %v", err)
	}
	var ds []string
	for _, d := range m.Manifests {
		ds = append(ds, d.Digest.String())
	}
	return ds
}

var sortStrings = cmpopts.SortSlices(func(a, b string) bool { return a < b })

func TestNotifyRetriesRefusedEvent(t *testing.T) {
	refused := false
	rec := newRecorder(t, func(p post) bool {
		// Refuse the first tagged manifest push once (fail runs under
		// the recorder's lock).
		if !refused && len(p.events) == 1 && p.events[0].Target.Tag != "" {
			refused = true
			return true
		}
		return false
	})
	r := start(t, Notify{URL: rec.URL()})
	digest, err := r.Push(t.Context(), "app", "v1")
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	isManifest := manifestPush("app", "v1", digest)
	posts := rec.waitFor(func(ps []post) bool { return count(ps, isManifest) == 2 })
	var ids []string
	for _, p := range posts {
		for _, e := range p.events {
			if isManifest(e) {
				ids = append(ids, e.ID)
			}
		}
	}
	if ids[0] != ids[1] {
		t.Errorf("redelivered event has id %s, first delivery %s; want the same id", ids[1], ids[0])
	}
}

func TestSetNotify(t *testing.T) {
	first := newRecorder(t, nil)
	second := newRecorder(t, nil)
	r := start(t, Notify{})
	before, err := r.Push(t.Context(), "app", "v0")
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	steps := []struct {
		rec  *recorder
		tag  string
		auth string
	}{
		{rec: first, tag: "v1", auth: "Bearer one"},
		{rec: second, tag: "v2", auth: "Bearer two"},
	}
	digests := map[string]string{}
	for _, s := range steps {
		if err := r.SetNotify(Notify{URL: s.rec.URL(), Headers: http.Header{"Authorization": {s.auth}}}); err != nil {
			t.Fatalf("SetNotify: %v", err)
		}
		d, err := r.Push(t.Context(), "app", s.tag)
		if err != nil {
			t.Fatalf("Push: %v", err)
		}
		digests[s.tag] = d
		p, _, _ := find(s.rec.waitFor(func(ps []post) bool {
			return count(ps, manifestPush("app", s.tag, d)) == 1
		}), manifestPush("app", s.tag, d))
		if got := p.header.Get("Authorization"); got != s.auth {
			t.Errorf("Authorization = %q, want %q", got, s.auth)
		}
	}
	// Storage survives the swap, and each push went to one endpoint only.
	if _, err := r.Resolve(t.Context(), r.Host()+"/app@"+before); err != nil {
		t.Errorf("image pushed before SetNotify: %v", err)
	}
	if n := count(first.all(), manifestPush("app", "v2", digests["v2"])); n != 0 {
		t.Errorf("first endpoint got %d events for the push after the second SetNotify", n)
	}
	if n := count(second.all(), manifestPush("app", "v1", digests["v1"])); n != 0 {
		t.Errorf("second endpoint got %d events for the push before it was set", n)
	}
}

func TestSetNotifyRejectsBadURL(t *testing.T) {
	r := start(t, Notify{})
	for _, u := range []string{"127.0.0.1:8080/hook", "ftp://127.0.0.1/hook", "http://"} {
		if err := r.SetNotify(Notify{URL: u}); err == nil {
			t.Errorf("SetNotify(%q) succeeded, want an error", u)
		}
	}
	if _, err := Start(t.Context(), Options{Notify: Notify{URL: "::"}}); err == nil {
		t.Errorf("Start with a bad notify URL succeeded, want an error")
	}
}
