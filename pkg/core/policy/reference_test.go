package policy

import (
	"strings"
	"testing"
)

func TestTemplateReference(t *testing.T) {
	for _, tc := range []struct {
		ann     map[string]string
		def     string
		want    string
		wantErr string
	}{
		{nil, "", ReferenceTagDigest, ""},
		{nil, "tag", ReferenceTag, ""},
		{map[string]string{AnnotationTemplateReference: "tag"}, "tag@digest", ReferenceTag, ""},
		{map[string]string{AnnotationTemplateReference: "tag@digest"}, "tag", ReferenceTagDigest, ""},
		{map[string]string{AnnotationTemplateReference: "digest"}, "", "", `annotation inplace.dev/template-reference: invalid value "digest"`},
	} {
		got, err := TemplateReference(tc.ann, tc.def)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: err %v; want %q", tc.ann, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v default %q: %q %v; want %q", tc.ann, tc.def, got, err, tc.want)
		}
	}
}
