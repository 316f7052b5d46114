// Package bus is the event bus of the chain: one JetStream stream holding
// every CloudEvent, a durable pull consumer per function, publishing in the
// CloudEvents NATS binary mode with Nats-Msg-Id set to the event id (so the
// stream's dedup window drops a republished event), a dead-letter subject
// per function, and a KV bucket for rollout progress with compare-and-swap.
//
// Setup is idempotent: it creates what is missing and updates drifted
// configuration, so every process may run it on start.
//
// The bus does not decide how a message is settled; the runner does, from
// the handler's error (package settle).
//
// This folder is also the transport layer: bus and its sub-packages (runner,
// busauth, embednats, fleetnet, metrics, notify, brokerauth, keylock) carry events and
// wake-ups and serialise their handling per key.
// They import the pure core (pkg/core/...), the events contract and each
// other; never pkg/kube, pkg/inputs, pkg/tools, pkg/config, functions or
// cmd. pkg/layers_test.go keeps this true.
package bus
