package replay

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"sigs.k8s.io/yaml"

	"github.com/inplace-dev/inplace/pkg/kube"
)

// subresources are the path suffixes that write part of an object.
var subresources = []string{"/status", "/binding", "/eviction", "/ephemeralcontainers", "/resize", "/scale"}

// change turns a recorded write into a diff of its object.
func (d *DryRunner) change(ctx context.Context, w kube.Write) Change {
	c := Change{Verb: w.Verb, Path: w.Path}
	if w.Status >= http.StatusBadRequest {
		c.Refused = refusal(w.Result)
		return c
	}
	var live []byte
	if w.Verb != http.MethodPost {
		// JSON whatever the client prefers (a protobuf answer is no diff).
		b, err := d.Live.Get().AbsPath(objectPath(w.Path)).SetHeader("Accept", "application/json").DoRaw(ctx)
		if err == nil {
			live = b
		}
	}
	after := w.Result
	if w.Verb == http.MethodDelete {
		after = nil
	}
	c.Diff = unified(readable(live), readable(after), "live", "after "+w.Verb)
	return c
}

// objectPath is the path of the whole object a (sub)resource path writes.
func objectPath(p string) string {
	for _, s := range subresources {
		if strings.HasSuffix(p, s) {
			return strings.TrimSuffix(p, s)
		}
	}
	return p
}

// readable is an object as YAML without the fields every write changes.
func readable(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	var obj map[string]any
	if err := json.Unmarshal(b, &obj); err != nil {
		return string(b)
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
		delete(md, "resourceVersion")
		delete(md, "generation")
	}
	y, err := yaml.Marshal(obj)
	if err != nil {
		return string(b)
	}
	return string(y)
}

func unified(a, b, from, to string) string {
	if a == b {
		return ""
	}
	s, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(a), B: difflib.SplitLines(b), FromFile: from, ToFile: to, Context: 2,
	})
	if err != nil {
		return err.Error()
	}
	return s
}

// refusal is the message of a Status the API server answered with.
func refusal(b []byte) string {
	var st struct{ Message string }
	if json.Unmarshal(b, &st) == nil && st.Message != "" {
		return st.Message
	}
	return string(b)
}
