// Package registry turns a registry's webhook delivery into the pushes it
// reports, as events.ImagePushedData, one parser per payload format.
//
// It sits at the very start of the chain: the receiver (pkg/inputs/receiver)
// authenticates an HTTP delivery, hands its headers and body to Parse, and
// publishes one image.pushed event per push returned. A delivery that is
// genuine but reports no push (a pull, a delete, a scan, a test ping, the
// untagged platform manifests of a multi-arch push) yields a Result whose
// Ignored says why; a malformed body yields a *events.FieldError naming the
// payload field.
//
// Every reference is canonicalised with pkg/core/imageref (docker.io/library/…,
// lower-case registry and repository, registry ports kept), so that the same
// image pushed through two webhooks, or delivered twice, gives the same
// events.PushID.
//
// The package is pure: no I/O, no clock, no logging. It must not resolve
// tags against registries, authenticate requests or publish events; those
// belong to the receiver. FORMATS.md documents each format: its route, its
// authentication, what counts as a push and what is ignored.
package registry
