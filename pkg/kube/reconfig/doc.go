// Package reconfig restarts, in place, the pods of workloads that ask for it
// when a ConfigMap or Secret they use changes: what Stakater Reloader does
// with a rollout, and OpenKruise's users ask of a ContainerRecreateRequest
// (kruise #2064).
//
// A workload opts in with inplace.dev/restart-on-change: a comma list of
// configmap/NAME and secret/NAME, or "referenced" (every ConfigMap and
// Secret its pod template references through env, envFrom or volumes).
// The Watcher, in compute-spec's process, watches ConfigMaps and Secrets
// (keeping only a hash of their data, never the data) and, when one's data
// changes, publishes a container.restart.requested for each workload of its
// namespace that names it, for the containers that use it. compute-spec
// decides from there as for any restart request (the workload must opt in
// with inplace.dev/policy; waves within its budget).
package reconfig
