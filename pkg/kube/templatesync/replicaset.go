package templatesync

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// replicaSet without a Deployment: its template is mutable and compared to
// no pod, so one patch is the whole sync.
func (s *Syncer) replicaSet(ctx context.Context, r *rollout.Rollout, p *rollout.Sync) error {
	c := s.Client.AppsV1().ReplicaSets(r.Workload.Namespace)
	rs, err := c.Get(ctx, r.Workload.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return notSynced(p, ReasonWorkloadDeleted, "the ReplicaSet was deleted")
	}
	if err != nil {
		return err
	}
	if p.Step == StepStart {
		if done, err := s.begin(ctx, r, p, rs.ObjectMeta, rs.Spec.Template.Spec, rs.Spec.Selector); done || err != nil {
			return err
		}
		body, err := inplace.ReplicaSetSyncPatch(rs, p.Images, cause(r, p.Images))
		if err := sendBuilt(ctx, c.Patch, rs.Name, body, err); err != nil {
			return err
		}
		p.Step = StepRestored
	}
	return finish(ctx, s, r, p, rs.ObjectMeta, c.Patch)
}
