package policy

import (
	"fmt"
	"strings"
)

// AnnotationApproval says which pushes wait for an approver before
// anything is planned: "none", "major" (a container would move to a new
// major version) or "all".
const AnnotationApproval = "inplace.dev/approval"

// Approval is when a rollout waits for an approver.
type Approval string

// The approval modes.
const (
	ApprovalNone  Approval = "none"
	ApprovalMajor Approval = "major"
	ApprovalAll   Approval = "all"
)

// ParseApproval reads an approval mode; name is the annotation or key.
func ParseApproval(name, v string) (Approval, error) {
	switch a := Approval(strings.TrimSpace(v)); a {
	case ApprovalNone, ApprovalMajor, ApprovalAll:
		return a, nil
	case "":
		return ApprovalNone, nil
	}
	return "", annErr(name, v, `want "none", "major" or "all"`)
}

// NeedsApproval says why a container moving from the tag from to the tag
// to waits for an approver under mode a, or "" when it does not. A major
// is a new major version when both tags are versions ("v" allowed); a
// move from a tag that is no version to one that is counts as one too,
// since nothing tells it is not.
func NeedsApproval(a Approval, from, to string) string {
	switch a {
	case ApprovalAll:
		return fmt.Sprintf("every push waits for approval (%s: all)", AnnotationApproval)
	case ApprovalMajor:
		tv, ok := version(to)
		if !ok {
			return ""
		}
		fv, ok := version(from)
		if !ok {
			return fmt.Sprintf("%s is a version and the running %s is not: a new major as far as anyone can tell (%s: major)",
				to, orUnknown(from), AnnotationApproval)
		}
		if tv.Major() > fv.Major() {
			return fmt.Sprintf("%s is a new major (from %s) (%s: major)", to, from, AnnotationApproval)
		}
	}
	return ""
}
