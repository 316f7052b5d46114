// Package controller is the rollout controller, and the layer it is: what
// of a rollout is not one event's work. compute-spec turns an event into a
// rollout's beginning (the push, the request, the plan of its first pods);
// from then on the controller owns the rollout record in NATS KV: it
// records each pod's outcome once the pod bears it out (confirm), plans
// the next pods within the budget, holds a StatefulSet for its template
// sync, drives the template sync (Syncer) to its end, gates a rollout on
// an approver's decision, and emits what each transition makes
// (upgrade.planned, rollout.completed, rollout.halted, their CDEvents and
// request results).
//
// It is level-triggered: its Waker works a client-go workqueue fed by the
// pod and node informers (a pod Ready or gone, a pull done), and its
// watchdog (Sweep) re-derives every rollout's deadlines from durable
// state only (the record, the pods' state annotations), so no lost or
// dead-lettered event strands a rollout. Writes of one record are
// compare-and-swap on its revision, and one at a time per key in a
// process (pkg/bus/keylock). `inplace run` and the Knative mode start it
// beside compute-spec (cmd/inplace/app), whose consumer delivers the
// outcomes, resumes and decisions it takes; it publishes as compute-spec.
// It never patches pods: that is patch-pod's job.
//
// Layer rule: it imports the pure core (pkg/core/...), the events
// contract, the adapters (pkg/bus/..., pkg/kube/...) and pkg/config; never
// pkg/inputs, pkg/tools, functions or cmd. Functions and the composition
// import it. pkg/layers_test.go keeps this true.
package controller
