// Package cluster runs a real Kubernetes control plane for tests: etcd,
// kube-apiserver and kube-controller-manager, started as subprocesses from
// the binaries `make bin` builds into bin/ (k8s v1.35.4), on 127.0.0.1 in a
// temporary directory.
//
// The API server runs with RBAC authorization, client-certificate
// authentication (the admin certificate has O=system:masters), an EC
// service-account signing key (so the TokenRequest API works) and the
// ServiceAccount admission plugin disabled (pods get no token volume and a
// namespace needs no default ServiceAccount before its first pod). The
// controller-manager runs every on-by-default controller with per-controller
// service-account credentials, so Deployments, ReplicaSets, DaemonSets,
// StatefulSets, garbage collection, namespace deletion and the
// node-lifecycle controller behave as in a real cluster. There is no
// scheduler and no kubelet: package test/kubelet simulates both.
//
// A test binary shares one control plane: call Main from TestMain and Shared
// from a test; NewNamespace gives each test its own namespace, and
// MintKubeconfig gives a piece of code its own ServiceAccount identity so its
// RBAC can be exercised.
//
// Child processes are in their own process groups, are killed on Stop and,
// on Linux, die with the test binary (Pdeathsig). Their logs are kept in
// files under the cluster's directory; a failed start prints their tails.
//
// The package must not be imported by production code.
package cluster
