// Package planner holds compute-spec's pure decisions about a rollout, as
// functions of their inputs: what a push, a restart or a resize changes in
// each live pod of a workload (Candidates, RestartCandidates,
// ResizeCandidates, with Memo reusing the plans of pods that did not
// change), whether an undo push matches the rollout record (CheckUndo), and
// what the watchdog does about a pod in flight past its deadline (CheckPod).
//
// functions/computespec reads the cluster and the record, calls these, and
// writes and publishes what they decide. Part of the pure core: no I/O, no
// client-go, no NATS.
package planner
