// Package faults is the fault suite: whole rollouts on the test world while
// the parts they run on fail, each followed by the same checks.
//
// Faults: SIGKILL of a separate `inplace run` process at random points of a
// rollout, ten times and more in a row, once during the template sync; the
// nats-server (file storage) restarted mid-rollout; a 3-node JetStream
// cluster with R3 streams losing its stream leader; two `inplace run`
// processes (every function in each) on that cluster, one SIGKILLed
// mid-rollout; a proxy in front of the API server answering bursts of
// requests with 409, 429 and 5xx (some after forwarding them); every event
// of a rollout delivered twice, in a shuffled order.
//
// After each: every pod runs the target exactly once (same UID, restartCount
// +1 per rollout), no readiness gate is left False, nothing is left paused
// or with a sync record, no pre-pull pod is left, and each rollout has
// exactly one rollout.completed with true counts and no rollout.halted.
//
// `go test ./test/faults` runs each fault once on a small workload (the
// short suite of `make test`); `make faults` runs them INPLACE_FAULTS_RUNS
// times on INPLACE_FAULTS_PODS pods and writes the figures to
// INPLACE_FAULTS_REPORT.
package faults
