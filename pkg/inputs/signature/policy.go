package signature

import (
	"fmt"
	"regexp"
	"strings"
)

// The annotations of a workload's signature policy. A workload that names
// none takes signature-key, -identity and -issuer of config-inplace.
const (
	// AnnotationKey requires pushes signed by the public key in a Secret's
	// cosign.pub: "<secret>" in the workload's namespace, or
	// "k8s://<namespace>/<secret>".
	AnnotationKey = "inplace.dev/signature-key"
	// AnnotationIdentity requires a keyless signature whose certificate
	// names this identity (exact, or "regexp:<re>" matched whole); with
	// AnnotationIssuer.
	AnnotationIdentity = "inplace.dev/signature-identity"
	// AnnotationIssuer is the OIDC issuer of a keyless signature's
	// certificate (exact, or "regexp:<re>"); with AnnotationIdentity.
	AnnotationIssuer = "inplace.dev/signature-issuer"
)

// KeySecretKey is the Secret data key holding the PEM public key (cosign's).
const KeySecretKey = "cosign.pub"

// Policy says who must have signed a digest: a public key, or a keyless
// identity and issuer (exact, or "regexp:" and a regular expression that
// must match in whole). Either one verifying is enough.
type Policy struct {
	// Key is "k8s://<namespace>/<secret>" or "<secret>" (the workload's
	// namespace); its Secret holds cosign.pub.
	Key      string
	Identity string
	Issuer   string
}

// Required reports whether p asks for a signature at all.
func (p Policy) Required() bool { return p.Key != "" || p.Identity != "" }

// String describes p for reasons and Events.
func (p Policy) String() string {
	var parts []string
	if p.Key != "" {
		parts = append(parts, "key "+p.Key)
	}
	if p.Identity != "" {
		parts = append(parts, fmt.Sprintf("identity %s issued by %s", p.Identity, p.Issuer))
	}
	return strings.Join(parts, " or ")
}

// FromAnnotations reads a workload's policy over the default d: a workload
// that names a key or an identity replaces the default entirely. Errors
// name the annotation.
func FromAnnotations(ann map[string]string, d Policy) (Policy, error) {
	p := Policy{Key: strings.TrimSpace(ann[AnnotationKey]), Identity: strings.TrimSpace(ann[AnnotationIdentity]),
		Issuer: strings.TrimSpace(ann[AnnotationIssuer])}
	if !p.Required() && p.Issuer == "" {
		p = d
	}
	return p, p.Validate("annotation ")
}

// Validate checks p; prefix says where it came from ("annotation ",
// "config-inplace key ").
func (p Policy) Validate(prefix string) error {
	if (p.Identity == "") != (p.Issuer == "") {
		return fmt.Errorf("%s%s and %s: keyless verification needs both an identity and an issuer", prefix, AnnotationIdentity, AnnotationIssuer)
	}
	if p.Key != "" {
		if _, _, err := p.keyRef("default"); err != nil {
			return fmt.Errorf("%s%s: %w", prefix, AnnotationKey, err)
		}
	}
	for name, v := range map[string]string{AnnotationIdentity: p.Identity, AnnotationIssuer: p.Issuer} {
		if re, ok := strings.CutPrefix(v, "regexp:"); ok {
			if _, err := regexp.Compile(re); err != nil {
				return fmt.Errorf("%s%s: %q: %w", prefix, name, v, err)
			}
		}
	}
	return nil
}

// keyRef resolves Key to the Secret's namespace and name.
func (p Policy) keyRef(namespace string) (string, string, error) {
	ref := p.Key
	if rest, ok := strings.CutPrefix(ref, "k8s://"); ok {
		ns, name, ok := strings.Cut(rest, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			return "", "", fmt.Errorf("%q: want k8s://<namespace>/<secret> or <secret>", p.Key)
		}
		return ns, name, nil
	}
	if ref == "" || strings.Contains(ref, "/") || strings.Contains(ref, ":") {
		return "", "", fmt.Errorf("%q: want k8s://<namespace>/<secret> or <secret>", p.Key)
	}
	return namespace, ref, nil
}

// matcher splits an exact value or "regexp:<re>" into sigstore-go's
// (value, regexp) pair, anchoring the expression.
func matcher(v string) (string, string) {
	if re, ok := strings.CutPrefix(v, "regexp:"); ok {
		return "", "^(?:" + re + ")$"
	}
	return v, ""
}
