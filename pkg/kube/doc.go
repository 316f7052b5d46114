// Package kube holds what the functions share to talk to Kubernetes:
// client construction with explicit rate limits, a cache of informers with
// managedFields stripped (half of a pod's bytes) or a Snapshot of it filled
// by a few namespaced reads for a command that answers once, a pod index by image
// repository, and resolution of a pod's owning workload (pod → ReplicaSet →
// Deployment, StatefulSet, DaemonSet, or the bare pod).
//
// It reads, with one exception: OptedIn patches the opted-in ConfigMap (the
// admission policy's parameter) for compute-spec. Pods and workloads are
// written by the functions, each through its own least-privilege client.
//
// This folder is also the Kubernetes I/O layer: kube and its sub-packages
// (guard, templatesync, watcher, reconfig) read and write the cluster. They
// import the pure core (pkg/core/...), the events contract and each other;
// never pkg/bus, pkg/inputs, pkg/tools, pkg/config, functions or cmd.
// pkg/layers_test.go keeps this true.
package kube
