// Package core is the pure-core layer of inplace: the decisions of an
// in-place upgrade as functions of their inputs, with no I/O.
//
// Its packages (inplace, policy, rollout, planner, imageref, resize, restart, pulls,
// analysis, fleet, settle) import the standard library, Kubernetes API types
// (k8s.io/api, k8s.io/apimachinery), small pure libraries (semver, image
// references, CloudEvents types), the events contract and each other. They
// never import client-go or NATS, nor any other layer of this module
// (pkg/bus, pkg/kube, pkg/inputs, pkg/tools, pkg/config, functions, cmd):
// every other layer may import them. pkg/layers_test.go keeps this true.
package core
