package policy

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// view is the comparable part of Options.
type view struct {
	OptedIn        bool
	Policy         string
	MaxUnavailable string
	GraceSeconds   int
	Prepull        bool
	Paused         bool
	VerifySeconds  int
}

func viewOf(o Options) view {
	return view{o.OptedIn, o.Policy.String(), o.MaxUnavailable.String(), o.GraceSeconds, o.Prepull, o.Paused, o.VerifySeconds}
}

func TestFromAnnotations(t *testing.T) {
	defaults := Defaults{MaxUnavailable: intstr.FromInt32(2), GraceSeconds: 5, Prepull: true, VerifySeconds: 120}
	tests := []struct {
		name    string
		ann     map[string]string
		d       Defaults
		want    view
		wantErr string
	}{
		{name: "no annotations", ann: nil, d: defaults, want: view{MaxUnavailable: "0"}},
		{name: "other annotations only", ann: map[string]string{AnnotationGraceSeconds: "banana"}, d: defaults, want: view{MaxUnavailable: "0"}},
		{name: "policy only takes defaults", ann: map[string]string{AnnotationPolicy: "semver:minor"}, d: defaults,
			want: view{true, "semver:minor", "2", 5, true, false, 120}},
		{name: "zero defaults are filled", ann: map[string]string{AnnotationPolicy: "force"}, d: Defaults{},
			want: view{true, "force", "1", 0, false, false, 300}},
		{name: "standard defaults", ann: map[string]string{AnnotationPolicy: "force"}, d: StandardDefaults(),
			want: view{true, "force", "1", 0, true, false, 300}},
		{name: "everything set", d: defaults, ann: map[string]string{
			AnnotationPolicy: "digest", AnnotationMaxUnavailable: "25%", AnnotationGraceSeconds: "0",
			AnnotationPrepull: "false", AnnotationPaused: "true", AnnotationVerifySeconds: "60"},
			want: view{true, "digest", "25%", 0, false, true, 60}},
		{name: "count", d: defaults, ann: map[string]string{AnnotationPolicy: "force", AnnotationMaxUnavailable: " 3 "},
			want: view{true, "force", "3", 5, true, false, 120}},
		{name: "bad policy", ann: map[string]string{AnnotationPolicy: "yes"}, d: defaults, wantErr: AnnotationPolicy + `: invalid value "yes"`},
		{name: "max-unavailable zero", ann: map[string]string{AnnotationPolicy: "force", AnnotationMaxUnavailable: "0"}, d: defaults,
			wantErr: AnnotationMaxUnavailable + `: invalid value "0"`},
		{name: "max-unavailable zero percent", ann: map[string]string{AnnotationPolicy: "force", AnnotationMaxUnavailable: "0%"}, d: defaults,
			wantErr: AnnotationMaxUnavailable + `: invalid value "0%"`},
		{name: "max-unavailable over 100%", ann: map[string]string{AnnotationPolicy: "force", AnnotationMaxUnavailable: "150%"}, d: defaults,
			wantErr: AnnotationMaxUnavailable + `: invalid value "150%"`},
		{name: "max-unavailable word", ann: map[string]string{AnnotationPolicy: "force", AnnotationMaxUnavailable: "all"}, d: defaults,
			wantErr: AnnotationMaxUnavailable + `: invalid value "all"`},
		{name: "negative grace", ann: map[string]string{AnnotationPolicy: "force", AnnotationGraceSeconds: "-1"}, d: defaults,
			wantErr: AnnotationGraceSeconds + `: invalid value "-1"`},
		{name: "zero verify", ann: map[string]string{AnnotationPolicy: "force", AnnotationVerifySeconds: "0"}, d: defaults,
			wantErr: AnnotationVerifySeconds + `: invalid value "0"`},
		{name: "prepull yes", ann: map[string]string{AnnotationPolicy: "force", AnnotationPrepull: "yes"}, d: defaults,
			wantErr: AnnotationPrepull + `: invalid value "yes"`},
		{name: "paused empty", ann: map[string]string{AnnotationPolicy: "force", AnnotationPaused: ""}, d: defaults,
			wantErr: AnnotationPaused + `: invalid value ""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := FromAnnotations(tt.ann, tt.d)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v; want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, viewOf(o)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestBudget(t *testing.T) {
	tests := []struct {
		name     string
		max      intstr.IntOrString
		replicas int
		want     int
	}{
		{"one", intstr.FromInt32(1), 10, 1},
		{"count above replicas", intstr.FromInt32(5), 3, 5},
		{"25% of 10 rounds down", intstr.FromString("25%"), 10, 2},
		{"25% of 3 is at least 1", intstr.FromString("25%"), 3, 1},
		{"50% of 5 rounds down", intstr.FromString("50%"), 5, 2},
		{"100%", intstr.FromString("100%"), 7, 7},
		{"no replicas", intstr.FromString("50%"), 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Options{MaxUnavailable: tt.max}.Budget(tt.replicas)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
