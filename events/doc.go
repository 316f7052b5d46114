// Package events defines the CloudEvents that chain the inplace functions:
// their types, the JSON data each carries, constructors that derive
// deterministic IDs from the input event, and validation that turns a
// malformed event into a permanent error naming the bad field.
//
// It also adapts events from outside the project onto its own types: Knative
// ApiServerSource resource updates become pod.updated, CDEvents
// artifact.published becomes image.pushed; and it emits CDEvents
// service.upgraded / service.rolledback for CD tooling.
//
// The package does no I/O: it neither publishes nor reads from the cluster.
package events
