package policy

import (
	"path"
	"regexp"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Kind is the family of a policy.
type Kind string

// The policy kinds, as written after the annotation's prefix.
const (
	// SemverMajor allows any newer version.
	SemverMajor Kind = "semver:major"
	// SemverMinor allows a newer version with the same major.
	SemverMinor Kind = "semver:minor"
	// SemverPatch allows a newer version with the same major.minor.
	SemverPatch Kind = "semver:patch"
	// SemverConstraint allows a newer version that satisfies a Masterminds
	// constraint ("~1.25", "^2", ">=1.2, <2").
	SemverConstraint Kind = "semver:constraint"
	// Glob allows a tag matching a path.Match pattern ("1.*").
	Glob Kind = "glob"
	// Regexp allows a tag that a regular expression matches in whole.
	Regexp Kind = "regexp"
	// Force allows any tag (never a semver downgrade).
	Force Kind = "force"
	// Digest follows a moving tag ("latest"): it upgrades when the same tag
	// is pushed with another digest.
	Digest Kind = "digest"
	// Undo is no annotation's: it is what compute-spec applies to an
	// `inplace undo` it checked against its rollout record, going back to
	// the images the pods ran before, older versions included.
	Undo Kind = "undo"
)

// UndoPolicy is the policy of a checked undo.
func UndoPolicy() Policy { return Policy{Kind: Undo, Raw: "inplace undo"} }

// Policy is a parsed inplace.dev/policy value.
type Policy struct {
	Kind Kind
	// Raw is the value as written, used in reasons and errors.
	Raw string
	// Constraint is the semver:<constraint> range; nil for the other kinds.
	Constraint *semver.Constraints
	// Pattern is the glob or regular expression as written.
	Pattern string
	re      *regexp.Regexp
}

// String is the policy as written in the annotation.
func (p Policy) String() string { return p.Raw }

// Parse reads an inplace.dev/policy value. Regular expressions are anchored:
// "regexp:1\.2[0-9]" must match the whole tag, not part of it.
func Parse(value string) (Policy, error) {
	v := strings.TrimSpace(value)
	p := Policy{Raw: v}
	kind, arg, hasArg := strings.Cut(v, ":")
	switch {
	case v == string(Force) || v == string(Digest):
		p.Kind = Kind(v)
		return p, nil
	case kind == "semver" && hasArg:
		return parseSemver(p, arg)
	case kind == "glob" && hasArg:
		return parseGlob(p, arg)
	case kind == "regexp" && hasArg:
		return parseRegexp(p, arg)
	}
	return Policy{}, invalid(value, "want semver:major|minor|patch|<constraint>, glob:<pattern>, regexp:<re>, force or digest")
}

func parseSemver(p Policy, arg string) (Policy, error) {
	switch Kind("semver:" + arg) {
	case SemverMajor, SemverMinor, SemverPatch:
		p.Kind = Kind("semver:" + arg)
		return p, nil
	}
	if strings.TrimSpace(arg) == "" {
		return Policy{}, invalid(p.Raw, "the semver constraint is empty")
	}
	c, err := semver.NewConstraint(arg)
	if err != nil {
		return Policy{}, invalid(p.Raw, err.Error())
	}
	p.Kind, p.Constraint, p.Pattern = SemverConstraint, c, arg
	return p, nil
}

func parseGlob(p Policy, arg string) (Policy, error) {
	if arg == "" {
		return Policy{}, invalid(p.Raw, "the glob pattern is empty")
	}
	if _, err := path.Match(arg, ""); err != nil {
		return Policy{}, invalid(p.Raw, "bad glob pattern: "+err.Error())
	}
	p.Kind, p.Pattern = Glob, arg
	return p, nil
}

func parseRegexp(p Policy, arg string) (Policy, error) {
	if arg == "" {
		return Policy{}, invalid(p.Raw, "the regular expression is empty")
	}
	re, err := regexp.Compile(`^(?:` + arg + `)$`)
	if err != nil {
		return Policy{}, invalid(p.Raw, err.Error())
	}
	p.Kind, p.Pattern, p.re = Regexp, arg, re
	return p, nil
}

// matches reports whether tag fits a glob or regexp policy.
func (p Policy) matches(tag string) bool {
	switch p.Kind {
	case Glob:
		ok, _ := path.Match(p.Pattern, tag)
		return ok
	case Regexp:
		return p.re != nil && p.re.MatchString(tag)
	}
	return true
}

func invalid(value, why string) error {
	return annErr(AnnotationPolicy, value, why)
}
