package watcher

import _ "embed"

// RBAC is the ServiceAccount, ClusterRole and binding the watcher needs
// (rbac.yaml): list and watch pods, patch pods/status.
//
//go:embed rbac.yaml
var RBAC []byte
