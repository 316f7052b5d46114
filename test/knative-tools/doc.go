// Package tools is the module that builds Knative Eventing's components for
// the test world's Knative node (test/knative): the broker ingress and
// filter, the in-memory channel dispatcher and the ApiServerSource adapter
// from knative.dev/eventing's own mains (the tool lines of go.mod), and
// three controller processes from the mains beside this file.
//
// The three mains differ from Knative's in two ways only, both because a
// host process shares one network with every other: they serve no health
// probes (sharedmain's probe server binds :8080 on every interface, which
// the in-memory channel dispatcher must have), and they run no admission
// webhook (nothing here calls one; see test/knative).
package tools
