// Package policy reads the opt-in of a workload or bare pod (the
// inplace.dev/* annotations) and decides whether a pushed image may replace
// the one a container runs.
//
// It sits at the start of the chain: compute-spec parses the owner's
// annotations with FromAnnotations and asks Decide for every container that
// uses the pushed repository; `inplace plan` prints the same Decision.Reason.
//
// The package is pure: it reads no cluster and contacts no registry. A
// missing inplace.dev/policy annotation means "not opted in" and is not an
// error; a malformed one is, and the error names the annotation and value.
package policy
