package policy

import "github.com/Masterminds/semver/v3"

// Semver reports whether p is one of the semver kinds, whose newer
// versions are found by listing the repository's tags.
func (p Policy) Semver() bool {
	switch p.Kind {
	case SemverMajor, SemverMinor, SemverPatch, SemverConstraint:
		return true
	}
	return false
}

// Newest is the highest version among tags that p allows a container
// running the tag current to move to, or "" when none is newer. It is
// what a poll of a semver policy asks the registry for; Decide, on the
// push that follows, still has the last word.
func Newest(p Policy, current string, tags []string) string {
	var best *semver.Version
	bestTag := ""
	for _, t := range tags {
		if !Decide(p, Current{Tag: current}, Pushed{Tag: t}).Upgrade {
			continue
		}
		v, ok := version(t)
		if !ok {
			continue
		}
		if best == nil || v.GreaterThan(best) || (v.Equal(best) && t < bestTag) {
			best, bestTag = v, t
		}
	}
	return bestTag
}
