package manifests_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/events"
)

// funcSchema compiles knative/func's func.yaml schema (draft-04).
func funcSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "func_yaml-schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft4)
	if err := c.AddResource("func_yaml-schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("func_yaml-schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// asJSONValue turns YAML into what the validator takes.
func asJSONValue(t *testing.T, y []byte) any {
	t.Helper()
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestFuncYAMLIsValid(t *testing.T) {
	s := funcSchema(t)
	raw, err := os.ReadFile(filepath.Join(root(t), "func.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(asJSONValue(t, raw)); err != nil {
		t.Fatalf("func.yaml does not follow knative/func's schema:\n%v", err)
	}
	// The schema must be able to fail: the same file with a mistake.
	bad := bytes.Replace(raw, []byte("invoke: cloudevent"), []byte("invoke: kafka"), 1)
	if err := s.Validate(asJSONValue(t, bad)); err == nil {
		t.Fatal("an invalid invoke passed the schema")
	}
}

// TestFuncYAMLSubscriptions checks func.yaml subscribes the one service to
// every input type of the four functions.
func TestFuncYAMLSubscriptions(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root(t), "func.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Name    string `json:"name"`
		Runtime string `json:"runtime"`
		Invoke  string `json:"invoke"`
		Deploy  struct {
			ServiceAccountName string `json:"serviceAccountName"`
			Subscriptions      []struct {
				Source  string            `json:"source"`
				Filters map[string]string `json:"filters"`
			} `json:"subscriptions"`
		} `json:"deploy"`
	}
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if f.Runtime != "go" || f.Invoke != "cloudevent" {
		t.Errorf("runtime %q, invoke %q; want go, cloudevent", f.Runtime, f.Invoke)
	}
	got := map[string]bool{}
	for _, s := range f.Deploy.Subscriptions {
		if s.Source != "inplace" {
			t.Errorf("subscription %v is not on the Broker inplace", s.Filters)
		}
		got[s.Filters["type"]] = true
	}
	want := []string{events.APIServerSourceUpdate, events.APIServerSourceAdd}
	for _, c := range app.Consumers {
		want = append(want, c.Types...)
	}
	for _, typ := range want {
		if !got[typ] {
			t.Errorf("no subscription for %s", typ)
		}
	}
	if f.Deploy.ServiceAccountName != "inplace-function" {
		t.Errorf("serviceAccountName %q, want inplace-function (config/func)", f.Deploy.ServiceAccountName)
	}
}
