// Package config is the configuration of an inplace process, the Knative
// way: a typed struct parsed once at start from flags and INPLACE_* env
// (Process), failing fast with the bad key named; and defaults for opt-in
// policy that live in the `config-inplace` ConfigMap (Defaults), watched
// through knative.dev/pkg's configmap watcher so they change without a
// restart. The ConfigMap ships an `_example` key documenting every key.
//
// This folder is its own layer, between the adapters and their users: it
// imports the pure core (pkg/core/...), the events contract, and the types
// of pkg/bus (the bus's Config) and pkg/inputs (a signature Policy) that
// its settings name; the functions, the tools and the composition root
// import it. pkg/layers_test.go keeps this true.
package config
