package events

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const digestA = "sha256:0b31b1c02ff458ad9b7b81cbdf8f028bd54699fa151f221d1e8de6817db93427"

var at = time.Date(2026, 11, 20, 10, 2, 11, 0, time.UTC)

func samplePlan() Plan {
	return Plan{
		UpgradeID: "u-7f3a",
		Pod:       PodRef{Namespace: "shop", Name: "web-0", UID: "uid-1", Node: "node-1"},
		Owner:     ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web", UID: "uid-d"},
		Containers: []ContainerPlan{{
			Name: "app", FromImage: "registry.example/shop/web:1.2.0",
			FromImageID: "registry.example/shop/web@sha256:5b0bcabd1ed22e9fb1310cf6c2dec7cdef19f0ad69efa1f392e94a4333501270",
			ToImage:     "registry.example/shop/web:1.3.0@" + digestA, ToDigest: digestA, PullPolicy: "IfNotPresent",
		}},
		Target: "registry.example/shop/web:1.3.0@" + digestA, Wave: 2, GraceSeconds: 5,
		Prepull: true, ReadinessGate: true, VerifySeconds: 300, PlannedAt: at,
	}
}

// samples returns valid data for every event type.
func samples() map[string]any {
	value, base := 0.1, 0.0
	errorRatio := AnalysisMeasurement{Query: "error-ratio", Expr: `sum(rate(http_requests_total{code=~"5..",pod=~"web-0"}[1m]))`,
		Comparison: "<", Threshold: 0.05, At: at, Value: &value, Baseline: &base, Outcome: "Failure"}
	plan := samplePlan()
	pod := corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", UID: "uid-1", ResourceVersion: "42"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/shop/web:1.3.0"}}},
	}
	workload := ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "web", UID: "uid-d"}
	return map[string]any{
		ImagePushed: ImagePushedData{Registry: "registry.example", Repository: "shop/web", Tag: "1.3.0",
			Digest: digestA, PushedAt: at, Origin: "distribution"},
		UpgradeRequested: UpgradeRequestData{ImagePushedData: ImagePushedData{Registry: "registry.example", Repository: "shop/web",
			Tag: "1.2.0", Digest: digestA, PushedAt: at, Origin: "manual"}, Target: &workload, Containers: []string{"app"},
			AllowOlder: true, Undo: "u-7f3a"},
		UpgradePlanned: plan,
		ImagePrepulled: PrepulledData{Plan: plan, Node: "node-1", PullMillis: 812},
		PodPatched:     PatchedData{Plan: plan, ResourceVersion: "43", PatchedAt: at},
		PodUpdated:     PodUpdatedData{Pod: pod},
		ContainerRestarted: ContainerRestartedData{Pod: plan.Pod, Container: "app", OldContainerID: "containerd://a",
			NewContainerID: "containerd://b", RestartCount: 1, Image: "registry.example/shop/web:1.3.0", ImageID: "registry.example/shop/web@" + digestA},
		UpgradeSucceeded: OutcomeData{Plan: plan, Outcome: OutcomeSucceeded, PatchedAt: at, FinishedAt: at.Add(3 * time.Second),
			Containers: []ContainerResult{{Name: "app", Image: "registry.example/shop/web:1.3.0", ImageID: "x@" + digestA, RestartCount: 1}}},
		UpgradeFailed:     OutcomeData{Plan: plan, Outcome: OutcomeFailed, Reason: "RollbackFailed", Message: "pod deleted"},
		UpgradeRolledBack: OutcomeData{Plan: plan, Outcome: OutcomeRolledBack, Reason: "ImagePullBackOff", Message: "Back-off pulling image"},
		RolloutCompleted: RolloutData{UpgradeID: "u-7f3a", Workload: workload, Target: plan.Target,
			Counts: Counts{Pods: 10, Succeeded: 10}, TemplateSynced: true, PreviousImages: map[string]string{"app": "registry.example/shop/web:1.2.0"}},
		RolloutHalted:  RolloutData{UpgradeID: "u-7f3a", Workload: workload, Target: plan.Target, Counts: Counts{Pods: 10, Succeeded: 3, RolledBack: 1}, Reason: "UpgradeRolledBack"},
		RolloutResumed: ResumeData{Workload: workload, Reason: "fixed the image"},
		UpgradeApprovalRequested: ApprovalData{UpgradeID: "u-7f3a", Workload: workload, Target: plan.Target,
			Why: "2.0.0 is a new major (from 1.4.0)", RequestedAt: at, ExpiresAt: at.Add(24 * time.Hour)},
		UpgradeApprovalExpired: ApprovalData{UpgradeID: "u-7f3a", Workload: workload, Target: plan.Target,
			Why: "2.0.0 is a new major (from 1.4.0)", RequestedAt: at, ExpiresAt: at.Add(24 * time.Hour), Reason: "ApprovalExpired"},
		UpgradeApproved: DecisionData{UpgradeID: "u-7f3a", Workload: workload, By: "alice", Reason: "release 2 is go"},
		UpgradeRejected: DecisionData{UpgradeID: "u-7f3a", Workload: workload, By: "bob"},
		ContainerRestartRequested: RestartRequestData{Target: workload, Containers: []string{"app", "sidecar"},
			Strategy: RestartStrategy{FailurePolicy: FailurePolicyFail, OrderedRecreate: true, UnreadyGracePeriodSeconds: 5,
				MinStartedSeconds: 10, ActiveDeadlineSeconds: 300, TTLSecondsAfterFinished: 3600}, Reason: "config changed"},
		ContainerRestartSucceeded: RestartResultData{RequestID: "r-7f3a", Target: workload, Containers: []string{"app"},
			Counts: Counts{Pods: 3, Succeeded: 3}},
		ContainerRestartFailed: RestartResultData{RequestID: "r-7f3a", Target: workload, Containers: []string{"app"},
			Counts: Counts{Pods: 3, Succeeded: 1, Failed: 1}, Reason: "CrashLoopBackOff", Message: "shop/web-1: back-off"},
		ContainerResizeRequested: ResizeRequestData{Target: workload, Containers: []string{"app"}, CPU: "500m", Memory: "256Mi",
			DeadlineSeconds: 120, Reason: "black friday"},
		ContainerResizeSucceeded: ResizeResultData{RequestID: "z-7f3a", Target: workload, Containers: []string{"app"}, CPU: "500m",
			Counts: Counts{Pods: 3, Succeeded: 3}, Template: "TemplateSynced"},
		ContainerResizeFailed: ResizeResultData{RequestID: "z-7f3a", Target: workload, Containers: []string{"app"}, CPU: "64",
			Counts: Counts{Pods: 3, RolledBack: 1}, Reason: "Infeasible", Message: "shop/web-1: Node didn't have enough capacity"},
		RolloutAnalysisMeasured: AnalysisData{UpgradeID: "u-7f3a", Workload: workload, Target: plan.Target, Step: 0, Steps: 2,
			CanaryPods: []string{"web-0"}, BaselinePods: []string{"web-1", "web-2"}, Phase: AnalysisRunning,
			Measurements: []AnalysisMeasurement{errorRatio}},
		RolloutAnalysisPassed: AnalysisData{UpgradeID: "u-7f3a", Workload: workload, Target: plan.Target, Step: 1, Steps: 2,
			CanaryPods: []string{"web-0", "web-1"}, Phase: AnalysisPassed, Message: "all 1 queries passed 1 measurements",
			Measurements: []AnalysisMeasurement{errorRatio}},
		RolloutAnalysisFailed: AnalysisData{UpgradeID: "u-7f3a", Workload: workload, Target: plan.Target, Step: 0, Steps: 2,
			CanaryPods: []string{"web-0"}, Phase: AnalysisFailed, Reason: ReasonAnalysisFailed,
			Message: "query error-ratio: 0.1, want < 0.05 (1 failed, 0 tolerated)", Measurements: []AnalysisMeasurement{errorRatio}},
	}
}
