// Package verify is the verify function: pod.patched and pod.updated in;
// upgrade.succeeded, upgrade.rolledback or upgrade.failed out.
//
// It decides from the pod alone (a fresh GET; the inplace.dev/state
// annotation holds the plan and what each container ran before): while the
// state phase is Patched, inplace.Progress says whether the kubelet has
// restarted every planned container onto its target and it is ready;
// while RollingBack, inplace.RollbackProgress says whether the previous
// images run again. Once the kubelet has taken the patch up (inplace.Taken),
// before the new containers are ready, it sets the inplace.dev/ready
// condition True (pods that declare the gate): the pod's Ready then follows
// the new containers' readiness. On success it closes the state
// (FinishPatch; with the gate, if still False, in the same write) and
// reports.
// On a failure the kubelet will not recover from by itself
// (ImagePullBackOff, CrashLoopBackOff, InvalidImageName, ...) or at the
// deadline (patchedAt + verifySeconds) it patches the previous images back
// (RollbackPatch), waits for them to run and be ready, and reports the
// rollback with the kubelet's message; when even that fails, or the pod is
// gone, replaced or changed by someone else, it reports the failure.
//
// Before any write the state is checked against the rollout record
// (Guard): the previous images a rollback restores are the record's, never
// the annotation's (one that names others was edited: a Warning Event
// says so); a state the record does not confirm is refused (Warning Event,
// dead letter). When the record has the upgrade over or never had it, or
// the owner withdrew it, the gate patch-pod set False for it is set True:
// nothing else would open it.
//
// pod.patched is the timer: while nothing is decided it answers "not yet"
// and is delivered again. A timer that comes back after the next upgrade
// took the pod reports how its upgrade had ended then, as the next
// upgrade's state records it (inplace.EndBefore); only an upgrade still
// under way then, or one that state says nothing of, was superseded, unless
// the rollout record has its end: compute-spec's records carry each pod's
// recorded ends into the next rollouts' (rollout.EndOf), and no upgrade is
// reported failed (superseded, changed by others, gone) that the record
// has over; a timer reports that end instead. pod.updated only makes
// decisions sooner; for pods without an upgrade in flight it does nothing.
// Every write is guarded by a test of the state annotation as read, so
// concurrent deliveries cannot both act; outcome ids depend only on the
// upgrade, the pod and the outcome (inplace.StepID), so every path to the
// same end emits one event; and once the runner has confirmed an outcome
// on the stream (Published), a later delivery that arrives at the same end
// settles without returning it again.
package verify
