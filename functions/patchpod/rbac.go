package patchpod

import _ "embed"

// RBAC is the ServiceAccount, ClusterRole and binding the function needs
// (rbac.yaml): get and patch pods, patch pods/status, get the pod's owners
// (ReplicaSets and workloads), create and patch events. Nothing else: it
// cannot create or delete pods, nor write workloads.
//
//go:embed rbac.yaml
var RBAC []byte
