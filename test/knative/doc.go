// Package knative runs Knative Eventing on the test world: its own
// components (built from knative.dev/eventing by `make bin-knative`) as host
// processes against the world's API server, and the project's functions
// behind a real Broker, Triggers and ApiServerSource.
//
// A host has no cluster DNS and no container network, so the node stands
// in for them, and only for them:
//   - a forward proxy on loopback, given to every process as HTTP_PROXY,
//     routes cluster names (broker-ingress.knative-eventing.svc.cluster.local,
//     <channel>-kn-channel.<ns>..., <service>.<ns>...) to the local port
//     serving each, Host header kept;
//   - Services of the node's components have hand-made EndpointSlices at a
//     documentation address (192.0.2.1), which is what the Broker and
//     channel reconcilers check;
//   - Knative Serving does not run: Serve starts one `inplace function`
//     process per Knative Service (its container's environment, its
//     ServiceAccount's identity) and publishes its address in the
//     Service's status, so Triggers resolve their subscriber refs as they
//     would on a cluster;
//   - no admission webhook runs, so Triggers must carry the label
//     eventing.knative.dev/broker (config/knative sets it) and SinkBinding
//     is resolved by Serve (K_SINK is the sink's address).
//
// The in-memory channel dispatcher binds :8080 and :8443 on every
// interface (Knative fixes them), so one node runs per host at a time:
// the Knative tests have a test binary of their own, and nothing else in
// the tests may take those ports. Every process dies with the test binary.
package knative
