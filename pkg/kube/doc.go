// Package kube holds what the functions share to talk to Kubernetes:
// client construction with explicit rate limits, a cache of informers with
// managedFields stripped (half of a pod's bytes) or a Snapshot of it filled
// by a few namespaced reads for a command that answers once, a pod index by image
// repository, and resolution of a pod's owning workload (pod → ReplicaSet →
// Deployment, StatefulSet, DaemonSet, or the bare pod).
//
// It reads; the functions write, each through its own least-privilege client.
package kube
