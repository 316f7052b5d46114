package events

import (
	"encoding/json"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	knevents "knative.dev/eventing/pkg/adapter/apiserver/events"
)

// TestGenerateAPIServerSourceFixture writes testdata/apiserversource_pod_update.json
// with Knative's own ApiServerSource event constructor when GEN=1.
func TestGenerateAPIServerSourceFixture(t *testing.T) {
	if os.Getenv("GEN") == "" {
		t.Skip("set GEN=1 to regenerate")
	}
	raw, err := os.ReadFile("testdata/pod_running.json")
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := json.Unmarshal(raw, &obj.Object); err != nil {
		t.Fatal(err)
	}
	_, ev, err := knevents.MakeUpdateEvent("https://10.96.0.1:443", "inplace-pods", obj, false)
	if err != nil {
		t.Fatal(err)
	}
	ev.SetID("2ab6fbd5-3d8b-4d9f-95c4-b1e4d1e0f0a7")
	out, _ := json.MarshalIndent(ev, "", "  ")
	os.WriteFile("testdata/apiserversource_pod_update.json", out, 0o644)
}
