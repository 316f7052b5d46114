package verify

import _ "embed"

// RBAC is the ServiceAccount, ClusterRole and binding the function needs
// (rbac.yaml): get and patch pods, patch pods/status, create and patch
// events. Nothing else: it cannot create or delete pods.
//
//go:embed rbac.yaml
var RBAC []byte
