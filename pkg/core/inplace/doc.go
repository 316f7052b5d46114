// Package inplace is the pure core of an in-place upgrade: which containers
// of a pod a push may move (PlanPod), the JSON patch that moves them and
// records the inplace.dev/state annotation (Patch), how far the kubelet has
// got (Progress), how to undo it (RollbackPatch, RollbackProgress), the
// inplace.dev/ready readiness gate, and the patches that bring a workload's
// template along without a rollout (DeploymentSyncPatch and friends).
// The state carries the rest of the plan, so PlanFromState rebuilds it from
// the pod alone; StepID names the events that mean "this pod's upgrade
// reached a state"; InitGatePatch gives a new pod declaring the gate its
// condition.
//
// compute-spec, patch-pod and verify are thin I/O shells around it. Every
// function here is a function of the objects it is given: it never calls the
// API server, a registry or NATS. Patches carry their own preconditions
// (RFC 6902 "test" ops on the UID, the current images and whatever else
// the decision read, or the resourceVersion) so the API server rejects
// them when the object changed since it was read;
// errors that no retry can fix are marked with settle.Permanent.
//
// The algorithm follows OpenKruise's pkg/util/inplaceupdate (compute the
// spec, patch image and state together, call it done when each container's
// imageID changed, or its containerID/restartCount moved where the digest is
// the same, and it is ready again), adapted to native workloads.
package inplace
