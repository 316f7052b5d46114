package policy

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in    string
		kind        Kind
		pattern     string
		wantErrPart string
	}{
		{name: "major", in: "semver:major", kind: SemverMajor},
		{name: "minor", in: "semver:minor", kind: SemverMinor},
		{name: "patch", in: "semver:patch", kind: SemverPatch},
		{name: "tilde", in: "semver:~1.25", kind: SemverConstraint, pattern: "~1.25"},
		{name: "caret", in: "semver:^2", kind: SemverConstraint, pattern: "^2"},
		{name: "range", in: "semver:>=1.2, <2", kind: SemverConstraint, pattern: ">=1.2, <2"},
		{name: "glob", in: "glob:1.*", kind: Glob, pattern: "1.*"},
		{name: "regexp", in: `regexp:^1\.2[0-9]$`, kind: Regexp, pattern: `^1\.2[0-9]$`},
		{name: "force", in: "force", kind: Force},
		{name: "digest", in: " digest ", kind: Digest},
		{name: "empty", in: "", wantErrPart: `invalid value ""`},
		{name: "unknown", in: "always", wantErrPart: `invalid value "always"`},
		{name: "semver alone", in: "semver", wantErrPart: "want semver:major"},
		{name: "bad constraint", in: "semver:~>banana", wantErrPart: `"semver:~>banana"`},
		{name: "empty constraint", in: "semver:", wantErrPart: "constraint is empty"},
		{name: "bad glob", in: "glob:[1-", wantErrPart: "bad glob pattern"},
		{name: "empty glob", in: "glob:", wantErrPart: "glob pattern is empty"},
		{name: "bad regexp", in: "regexp:(1", wantErrPart: "missing closing )"},
		{name: "force with arg", in: "force:1", wantErrPart: `invalid value "force:1"`},
		{name: "upper case", in: "Force", wantErrPart: `invalid value "Force"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(tt.in)
			if tt.wantErrPart != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrPart) || !strings.Contains(err.Error(), AnnotationPolicy) {
					t.Fatalf("Parse(%q) error = %v; want one naming %s and containing %q", tt.in, err, AnnotationPolicy, tt.wantErrPart)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			got := struct{ Kind, Pattern, Raw string }{string(p.Kind), p.Pattern, p.String()}
			want := struct{ Kind, Pattern, Raw string }{string(tt.kind), tt.pattern, strings.TrimSpace(tt.in)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestRegexpIsAnchored(t *testing.T) {
	p, err := Parse(`regexp:1\.2[0-9]`)
	if err != nil {
		t.Fatal(err)
	}
	for tag, want := range map[string]bool{"1.25": true, "1.25-alpine": false, "v1.25": false, "11.25": false} {
		if got := p.matches(tag); got != want {
			t.Errorf("matches(%q) = %v; want %v", tag, got, want)
		}
	}
}
