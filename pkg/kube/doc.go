// Package kube holds what the functions share to talk to Kubernetes:
// client construction with explicit rate limits, a cache of informers with
// managedFields stripped (half of a pod's bytes), a pod index by image
// repository, and resolution of a pod's owning workload (pod → ReplicaSet →
// Deployment, StatefulSet, DaemonSet, or the bare pod).
//
// It reads; the functions write, each through its own least-privilege client.
package kube
