package policy

import (
	"fmt"
	"strings"
)

// AnnotationTemplateReference chooses how the template sync writes an
// image into a workload's template: "tag@digest" (the default: the bytes
// the pods run, so a new pod gets them too) or "tag" (what manifests in Git
// usually say; a new pod then pulls whatever the tag names by then).
const AnnotationTemplateReference = "inplace.dev/template-reference"

// Template reference styles.
const (
	ReferenceTagDigest = "tag@digest"
	ReferenceTag       = "tag"
)

// ParseTemplateReference checks a reference style; "" is the default.
func ParseTemplateReference(v string) (string, error) {
	switch s := strings.TrimSpace(v); s {
	case "":
		return ReferenceTagDigest, nil
	case ReferenceTagDigest, ReferenceTag:
		return s, nil
	}
	return "", fmt.Errorf("invalid value %q: want %q or %q", v, ReferenceTagDigest, ReferenceTag)
}

// TemplateReference is the workload's reference style: its annotation, else def.
func TemplateReference(ann map[string]string, def string) (string, error) {
	v, ok := ann[AnnotationTemplateReference]
	if !ok {
		return ParseTemplateReference(def)
	}
	s, err := ParseTemplateReference(v)
	if err != nil {
		return "", fmt.Errorf("annotation %s: %w", AnnotationTemplateReference, err)
	}
	return s, nil
}
