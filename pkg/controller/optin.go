package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/pkg/kube"
)

// OptIn keeps the owners the admission policy lets the functions write
// pods of (kube.OptedIn).
type OptIn interface {
	Allow(ctx context.Context, owners map[string]string) error
	Forget(ctx context.Context, uids []string) error
}

// Allow lets the functions write the pods of a workload that opts in:
// their owners go into the admission policy's list before any is planned.
func (ctl *Rollouts) Allow(ctx context.Context, pods []*corev1.Pod) error {
	if ctl.d.OptIn == nil {
		return nil
	}
	return wrap("allow the pods' owners", ctl.d.OptIn.Allow(ctx, kube.Owners(pods)))
}

// Forget takes a workload that does not opt in (any more) out of the list.
func (ctl *Rollouts) Forget(ctx context.Context, t Target) error {
	if ctl.d.OptIn == nil || t.Options.OptedIn {
		return nil
	}
	pods, err := ctl.d.Cache.PodsOf(t.Workload.Ref)
	if err != nil {
		return wrap("pods of "+t.Workload.Ref.String(), err)
	}
	uids := []string{t.Workload.Ref.UID}
	for uid := range kube.Owners(pods) {
		uids = append(uids, uid)
	}
	return wrap("forget the owners of "+t.Workload.Ref.String(), ctl.d.OptIn.Forget(ctx, uids))
}
