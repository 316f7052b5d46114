// Package fntest is test support for the chain's functions (pre-pull,
// patch-pod, verify) and the pod watcher: running pods in the test world,
// plans made by the real inplace.PlanPod, a function's RBAC applied to a
// fresh ServiceAccount with a client minted for it, and a driver that
// calls a handler again after each "not yet", as the bus would.
//
// It must not be imported by production code.
package fntest
