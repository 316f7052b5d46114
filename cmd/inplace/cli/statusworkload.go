package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/inplace"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/tools/history"
)

// workloadStatus is what `inplace status KIND/NAME` shows: the workload's
// rollout record (nil when none) and its pods.
type workloadStatus struct {
	Workload string           `json:"workload"`
	Rollout  *history.Summary `json:"rollout"`
	Pods     []podStatus      `json:"pods"`
}

// podStatus is one pod as the API server has it, and its upgrade's state.
type podStatus struct {
	Name       string            `json:"name"`
	Node       string            `json:"node,omitempty"`
	Ready      bool              `json:"ready"`
	Containers []containerStatus `json:"containers"`
	UpgradeID  string            `json:"upgradeID,omitempty"`
	Phase      string            `json:"phase,omitempty"`
	Reason     string            `json:"reason,omitempty"`
}

type containerStatus struct {
	Name         string `json:"name"`
	Image        string `json:"image"`
	ImageID      string `json:"imageID,omitempty"`
	RestartCount int32  `json:"restartCount"`
}

// runWorkloadStatus reads the workload and its pods (within the deadline),
// then its rollout record.
func runWorkloadStatus(cmd *cobra.Command, o *statusOptions, arg string) error {
	ref, pods, err := readWorkloadPods(cmd, &o.kube, arg)
	if err != nil {
		return err
	}
	c, err := o.conn.connect()
	if err != nil {
		return err
	}
	defer c.nc.Close()
	r, err := history.ReadRollout(cmd.Context(), c.js, o.bucket, ref)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	ws := workloadStatus{Workload: ref.String(), Pods: make([]podStatus, 0, len(pods))}
	if r != nil {
		sum := history.Summarize(*r)
		ws.Rollout = &sum
	}
	for _, p := range pods {
		ws.Pods = append(ws.Pods, podStatusOf(p, r))
	}
	if ok, err := writeStructured(cmd.OutOrStdout(), o.output, ws); ok {
		return err
	}
	return writeWorkloadStatus(cmd.OutOrStdout(), ws, time.Now())
}

// readWorkloadPods resolves KIND/NAME and reads it and its pods.
func readWorkloadPods(cmd *cobra.Command, k *kubeFlags, arg string) (events.ObjectRef, []*corev1.Pod, error) {
	s, err := k.session()
	if err != nil {
		return events.ObjectRef{}, nil, err
	}
	ctx, cancel := s.reads(cmd.Context())
	defer cancel()
	ref, err := s.workload(ctx, arg)
	if err != nil {
		return ref, nil, err
	}
	snap, err := s.snapshot(ctx, ref)
	if err != nil {
		return ref, nil, err
	}
	pods, err := snap.PodsOf(ref)
	return ref, pods, err
}

// podStatusOf is the pod as the API server has it; where its upgrade
// stands comes from the rollout record r when that holds this pod (same
// UID), else from its inplace.dev/state (a success writes no state: the
// record has it).
func podStatusOf(p *corev1.Pod, r *rollout.Rollout) podStatus {
	ps := podStatus{Name: p.Name, Node: p.Spec.NodeName}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			ps.Ready = c.Status == corev1.ConditionTrue
		}
	}
	statuses := map[string]corev1.ContainerStatus{}
	for _, s := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		statuses[s.Name] = s
	}
	for _, c := range p.Spec.Containers {
		st := statuses[c.Name]
		ps.Containers = append(ps.Containers, containerStatus{Name: c.Name, Image: c.Image, ImageID: st.ImageID, RestartCount: st.RestartCount})
	}
	if r != nil {
		if rp, ok := r.Pods[p.Name]; ok && rp.UID == string(p.UID) {
			ps.UpgradeID, ps.Phase, ps.Reason = rp.UpgradeID, string(rp.State), rp.Reason
			return ps
		}
	}
	state, err := inplace.ParseState(p)
	switch {
	case err != nil:
		ps.Reason = err.Error()
	case state != nil:
		ps.UpgradeID, ps.Phase, ps.Reason = state.UpgradeID, string(state.Phase), state.Reason
	}
	return ps
}

// writeWorkloadStatus prints the rollout's status line and a pod table.
func writeWorkloadStatus(w io.Writer, ws workloadStatus, now time.Time) error {
	if ws.Rollout != nil {
		if err := history.WriteStatus(w, []history.Summary{*ws.Rollout}, now); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "%s: no rollout recorded\n", ws.Workload)
	}
	fmt.Fprintln(w)
	if len(ws.Pods) == 0 {
		_, err := fmt.Fprintf(w, "%s has no pods\n", ws.Workload)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POD\tNODE\tREADY\tRESTARTS\tCONTAINERS\tPHASE\tUPGRADE\tREASON")
	for _, p := range ws.Pods {
		var cs []string
		var restarts int32
		for _, c := range p.Containers {
			cs = append(cs, c.Name+"="+c.Image)
			restarts += c.RestartCount
		}
		fmt.Fprintf(tw, "%s\t%s\t%t\t%d\t%s\t%s\t%s\t%s\n", p.Name, dash(p.Node), p.Ready, restarts,
			strings.Join(cs, ","), dash(p.Phase), dash(p.UpgradeID), dash(p.Reason))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
