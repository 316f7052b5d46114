package inplace

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestPreconditionFailed(t *testing.T) {
	// What k8s.io/apiserver's jsonPatcher returns when a test op fails.
	testFailed := apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "",
		"testing value /metadata/resourceVersion failed: test failed", 0, false)
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"failed test op", testFailed, true},
		{"wrapped", fmt.Errorf("patch pod shop/web-1: %w", testFailed), true},
		{"validation error", apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "web-1",
			field.ErrorList{field.Forbidden(field.NewPath("spec"), "pod updates may not change fields other than ...")}), false},
		{"conflict", apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "web-1", errors.New("modified")), false},
		{"not found", apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "web-1"), false},
		{"plain error", errors.New("boom"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PreconditionFailed(tt.err); got != tt.want {
				t.Errorf("PreconditionFailed(%v) = %v; want %v", tt.err, got, tt.want)
			}
		})
	}
}
