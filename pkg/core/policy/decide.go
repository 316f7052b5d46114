package policy

import "fmt"

// Current is what a container runs now.
type Current struct {
	// Tag is the tag of the container's spec image ("latest" when it names
	// none; "" when it is pinned by digest only).
	Tag string
	// Digest is the running digest, from the status imageID; "" when unknown.
	Digest string
}

// Pushed is what the registry says was pushed.
type Pushed struct {
	Tag string
	// Digest is "" when the webhook did not carry it.
	Digest string
}

// Decision is whether a container should move to a pushed image, and why,
// as a sentence for people ("1.24.0 → 1.25.1 allowed by semver:minor").
type Decision struct {
	Upgrade bool
	Reason  string
}

func allow(format string, args ...any) Decision {
	return Decision{Upgrade: true, Reason: fmt.Sprintf(format, args...)}
}

func refuse(format string, args ...any) Decision {
	return Decision{Reason: fmt.Sprintf(format, args...)}
}

// Decide applies p to one container. Whatever the policy, it never moves a
// container to the digest it already runs, and never to a lower version
// when both tags are semantic versions (a leading "v" allowed).
func Decide(p Policy, cur Current, push Pushed) Decision {
	if push.Digest != "" && push.Digest == cur.Digest {
		return refuse("already running %s", push.Digest)
	}
	if p.Kind == Undo {
		return allow("%s → %s: back to what the pods ran before (inplace undo)", orUnknown(cur.Tag), orUnknown(push.Tag))
	}
	if push.Tag == "" {
		if p.Kind == Force {
			return allow("%s → %s allowed by force", orUnknown(cur.Tag), push.Digest)
		}
		return refuse("the push names no tag, only %s; policy %s needs a tag", push.Digest, p)
	}
	if pv, cv, ok := versions(push.Tag, cur.Tag); ok && pv.LessThan(cv) {
		return refuse("%s would downgrade from %s", push.Tag, cur.Tag)
	}
	switch p.Kind {
	case Digest:
		return decideDigest(p, cur, push)
	case Force, Glob, Regexp:
		return decideTag(p, cur, push)
	case SemverMajor, SemverMinor, SemverPatch, SemverConstraint:
		return decideSemver(p, cur, push)
	}
	return refuse("policy %q is not known", p.Raw)
}

// decideTag serves force, glob and regexp: any tag the pattern allows; the
// running tag pushed again counts when its digest changed or is unknown.
func decideTag(p Policy, cur Current, push Pushed) Decision {
	if !p.matches(push.Tag) {
		return refuse("tag %s does not match %s", push.Tag, p)
	}
	if push.Tag == cur.Tag {
		return repushed(p, cur, push)
	}
	return allow("%s → %s allowed by %s", orUnknown(cur.Tag), push.Tag, p)
}

// decideDigest follows one moving tag: only a push of the running tag.
func decideDigest(p Policy, cur Current, push Pushed) Decision {
	if push.Tag != cur.Tag {
		return refuse("%s is not the running tag %s; policy %s follows only the running tag", push.Tag, orUnknown(cur.Tag), p)
	}
	return repushed(p, cur, push)
}

// repushed allows the running tag pushed with another (or an unknown) digest.
func repushed(p Policy, cur Current, push Pushed) Decision {
	if push.Digest == "" {
		return allow("%s pushed again (digest unknown, the kubelet resolves it) allowed by %s", push.Tag, p)
	}
	return allow("%s: %s → %s allowed by %s", push.Tag, orUnknown(cur.Digest), push.Digest, p)
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}
