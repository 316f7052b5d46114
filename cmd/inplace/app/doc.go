// Package app assembles a process from its configuration: the Kubernetes
// clients and caches, the rollout KV, the hot-reloaded defaults, the
// functions named by --functions, the webhook receiver and the pod watcher.
// `inplace run` and the Knative entry (the module root's New) share it, so
// both run exactly the same functions.
package app
