package manifests_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"knative.dev/pkg/apis"

	eventingv1 "knative.dev/eventing/pkg/apis/eventing/v1"
	sourcesv1 "knative.dev/eventing/pkg/apis/sources/v1"
	servingv1 "knative.dev/serving/pkg/apis/serving/v1"
)

// knativeDecoder decodes strictly into Knative's Go types: an unknown or
// duplicate field is an error, as in `kubectl apply --validate=strict`.
func knativeDecoder(t *testing.T) runtime.Decoder {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{servingv1.AddToScheme, eventingv1.AddToScheme, sourcesv1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return serializer.NewCodecFactory(s, serializer.EnableStrict).UniversalDeserializer()
}

// knativeObject is what Knative's webhook checks: defaults, then validation.
type knativeObject interface {
	runtime.Object
	apis.Defaultable
	apis.Validatable
}

// TestKnativeObjectsValidate decodes every Knative object of every overlay
// strictly into Knative Serving's and Eventing's Go types, defaults it and
// runs its Validate as their admission webhooks would on create (the test
// world runs no Knative webhook).
func TestKnativeObjectsValidate(t *testing.T) {
	dec := knativeDecoder(t)
	seen := map[string]int{}
	for _, dir := range overlays(t) {
		for _, o := range render(t, dir) {
			if !isKnative(o) {
				continue
			}
			t.Run(filepath.Base(dir)+"/"+key(o), func(t *testing.T) {
				raw, err := json.Marshal(o.Object)
				if err != nil {
					t.Fatal(err)
				}
				obj, _, err := dec.Decode(raw, nil, nil)
				if err != nil {
					t.Fatalf("strict decode: %v", err)
				}
				k, ok := obj.(knativeObject)
				if !ok {
					t.Fatalf("%T is not defaultable and validatable", obj)
				}
				ctx := apis.WithinCreate(context.Background())
				k.SetDefaults(ctx)
				if err := k.Validate(ctx); err != nil {
					t.Fatalf("Validate: %v", err)
				}
				seen[o.GetKind()]++
			})
		}
	}
	for _, kind := range []string{"Service", "Broker", "Trigger", "ApiServerSource", "SinkBinding"} {
		if seen[kind] == 0 {
			t.Errorf("no %s was checked", kind)
		}
	}
}

// TestKnativeValidateCanFail shows the check is real: a Trigger on no
// Broker and a Service with two containers listening are refused.
func TestKnativeValidateCanFail(t *testing.T) {
	dec := knativeDecoder(t)
	tests := map[string]string{
		"trigger without broker": `{"apiVersion":"eventing.knative.dev/v1","kind":"Trigger","metadata":{"name":"t","namespace":"n"},
			"spec":{"subscriber":{"uri":"http://x"}}}`,
		"unknown field": `{"apiVersion":"sources.knative.dev/v1","kind":"SinkBinding","metadata":{"name":"s","namespace":"n"},
			"spec":{"sink":{"uri":"http://x"},"subjekt":{}}}`,
		"bad cesql": `{"apiVersion":"eventing.knative.dev/v1","kind":"Trigger","metadata":{"name":"t","namespace":"n"},
			"spec":{"broker":"b","filters":[{"cesql":"type = "}],"subscriber":{"uri":"http://x"}}}`,
	}
	for name, doc := range tests {
		t.Run(name, func(t *testing.T) {
			obj, _, err := dec.Decode([]byte(doc), nil, nil)
			if err != nil {
				return // refused by the strict decoder
			}
			k := obj.(knativeObject)
			ctx := apis.WithinCreate(context.Background())
			k.SetDefaults(ctx)
			if err := k.Validate(ctx); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}
