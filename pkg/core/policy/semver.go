package policy

import (
	"strings"

	"github.com/Masterminds/semver/v3"
)

// stages are pre-release words that mark a step towards a release, as
// opposed to a variant of one ("alpine", "bookworm").
var stages = map[string]bool{
	"alpha": true, "beta": true, "rc": true, "pre": true, "preview": true,
	"dev": true, "snapshot": true, "a": true, "b": true,
}

// version parses a tag as a semantic version; "v1.2.3" and "1.25" are
// accepted (the latter as 1.25.0).
func version(tag string) (*semver.Version, bool) {
	if tag == "" {
		return nil, false
	}
	v, err := semver.NewVersion(tag)
	return v, err == nil
}

func versions(pushed, current string) (pv, cv *semver.Version, ok bool) {
	pv, okp := version(pushed)
	cv, okc := version(current)
	return pv, cv, okp && okc
}

// flavor is the letters of a pre-release ("alpine3.19" → "alpine",
// "rc.1" → "rc"); release stages map to "" so that rc.1 → 1.25.0 stays on
// the same track while alpine → bookworm does not.
func flavor(v *semver.Version) string {
	f := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' || r == '.' || r == '-' {
			return -1
		}
		return r
	}, strings.ToLower(v.Prerelease()))
	if stages[f] {
		return ""
	}
	return f
}

// decideSemver serves the semver kinds: a newer version that the kind (or
// the constraint) allows. Downgrades were refused before.
func decideSemver(p Policy, cur Current, push Pushed) Decision {
	pv, ok := version(push.Tag)
	if !ok {
		return refuse("tag %s is not a semantic version, policy %s", push.Tag, p)
	}
	cv, ok := version(cur.Tag)
	if !ok {
		return fromUnversioned(p, cur, push, pv)
	}
	if !pv.GreaterThan(cv) {
		return refuse("%s is not newer than the running %s; policy %s moves only to newer versions", push.Tag, cur.Tag, p)
	}
	if p.Kind == SemverConstraint {
		return inConstraint(p, cur, push, pv)
	}
	if pv.Prerelease() != "" && cv.Prerelease() == "" {
		return refuse("%s is a pre-release, policy %s", push.Tag, p)
	}
	if flavor(pv) != flavor(cv) {
		return refuse("%s is another variant than the running %s, policy %s", push.Tag, cur.Tag, p)
	}
	switch {
	case p.Kind != SemverMajor && pv.Major() != cv.Major():
		return refuse("%s is a new major, policy %s", push.Tag, p)
	case p.Kind == SemverPatch && pv.Minor() != cv.Minor():
		return refuse("%s is a new minor, policy %s", push.Tag, p)
	}
	return allow("%s → %s allowed by %s", cur.Tag, push.Tag, p)
}

// fromUnversioned handles a container on a tag that is no version
// ("latest"): major and constraints are absolute and still apply; minor
// and patch have nothing to compare with.
func fromUnversioned(p Policy, cur Current, push Pushed, pv *semver.Version) Decision {
	switch p.Kind {
	case SemverConstraint:
		return inConstraint(p, cur, push, pv)
	case SemverMajor:
		if pv.Prerelease() != "" {
			return refuse("%s is a pre-release, policy %s", push.Tag, p)
		}
		return allow("%s → %s allowed by %s", orUnknown(cur.Tag), push.Tag, p)
	}
	return refuse("the running tag %s is not a semantic version; policy %s needs one to compare", orUnknown(cur.Tag), p)
}

// inConstraint checks the Masterminds range: pre-releases only when the
// range itself names one (">=1.25.0-0").
func inConstraint(p Policy, cur Current, push Pushed, pv *semver.Version) Decision {
	if p.Constraint.Check(pv) {
		return allow("%s → %s allowed by %s", orUnknown(cur.Tag), push.Tag, p)
	}
	if pv.Prerelease() != "" {
		return refuse("%s is a pre-release outside %s, policy %s (a range allows pre-releases when it names one, e.g. >=1.2.0-0)", push.Tag, p.Pattern, p)
	}
	return refuse("%s does not satisfy %s, policy %s", push.Tag, p.Pattern, p)
}
