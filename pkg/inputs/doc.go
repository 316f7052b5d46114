// Package inputs is the layer of what tells the chain that an image moved:
// webhooks from registries (receiver, with one parser per format in
// registry), registry polling (poll), signatures of a pushed digest
// (signature) and the pull-secret credentials they read registries with
// (keychain); and the metrics canary analysis judges a new version by
// (prometheus).
//
// Its packages import the pure core (pkg/core/...), the events contract,
// each other, and pkg/kube for the cluster's types (the poller reads the
// workloads it watches through kube's cache); never pkg/bus, pkg/tools,
// pkg/config, functions or cmd. pkg/layers_test.go keeps this true.
package inputs
