package prepull

import _ "embed"

// RBAC is the ServiceAccount, ClusterRole, Role and bindings the function
// needs (rbac.yaml): get nodes; create, get, list and delete pods in the
// pre-pull namespace, get and create ConfigMaps there (exit.go), and
// list and watch Events there. Nothing else.
//
//go:embed rbac.yaml
var RBAC []byte
