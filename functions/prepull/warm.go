package prepull

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/inplace-dev/inplace/pkg/config"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// Warm starts the pre-pulls of a rollout on every node its waiting pods
// run on, all at once, as soon as compute-spec records the rollout: the
// pods of later waves then find the image on their node when they are
// planned, instead of holding a max-unavailable slot while it is pulled.
// It is called with the newest revision of each rollout record (in
// `inplace run`, from the process's watched copy of the records, or a KV
// watch of its own where there is none, on the replica holding
// pre-pull's lease; a revision replaced while Warm was busy is skipped),
// and is level-triggered and idempotent: a node with the images, or with
// a pre-pull of them under way, or with no free slot, is left alone; the
// planned pod's own pre-pull (Handle) follows and ends the pre-pull pod.
// It only ever creates pre-pull pods, never writes a planned pod.
// raw is key's record at revision rev (0: unknown).
func (f *Function) Warm(ctx context.Context, key string, rev uint64, raw []byte) {
	v, err := f.d.Decoded.View(key, rev, raw)
	if err != nil || v.Record().UpgradeID == "" {
		return
	}
	r := v.Record()
	cfg := f.d.Config.Load()
	if r.Phase != rollout.Running || !r.Options.Prepull {
		f.tidy(ctx, cfg, r.UpgradeID)
		return
	}
	if r.Superseded != "" {
		f.tidy(ctx, cfg, r.Superseded)
	}
	for node, w := range waiting(v) {
		pods, err := f.ours(ctx, cfg, node)
		if err != nil {
			f.d.Log.Warn("warm pre-pull", "node", node, "err", err)
			continue
		}
		if withImages(pods, imagesKey(w.images)) != nil {
			continue
		}
		n, err := f.d.Reader.Node(ctx, node)
		if err != nil || onNode(n.Status.Images, w.images, w.always) || f.pulledOn(node, w.images, w.always) ||
			f.runningOn(node, w.images) {
			continue
		}
		name, ok := freeSlot(pods, node, cfg.PrepullPerNode)
		if !ok {
			continue
		}
		arch := n.Status.NodeInfo.Architecture
		if err := f.ensureExitFor(ctx, cfg.PrepullNamespace, arch); err != nil {
			f.d.Log.Warn("warm pre-pull", "node", node, "err", err)
			continue
		}
		pod := podFor(cfg.PrepullNamespace, name, node, arch, w.images, f.d.Clock.Now())
		pod.Labels[LabelUpgrade] = r.UpgradeID
		_, err = f.d.Client.CoreV1().Pods(cfg.PrepullNamespace).Create(ctx, pod, metav1.CreateOptions{FieldManager: "inplace-" + Name})
		switch {
		case err == nil:
			f.d.Log.Info("pre-pull started ahead", "rollout", r.UpgradeID, "node", node, "prepullPod", name, "images", w.images)
		case !apierrors.IsAlreadyExists(err):
			f.d.Log.Warn("warm pre-pull", "node", node, "err", err)
		}
	}
}

// want is what one node needs pulled.
type want struct {
	images []string
	always bool
}

// waiting are the images the rollout's pending pods will need, by node:
// as targets makes them from each pod's plan, so the planned pod's
// pre-pull finds the pod made here. A pod whose entry cannot be read is
// left out (compute-spec plans it, or not, from the record).
func waiting(v *rollout.View) map[string]want {
	out := map[string]want{}
	for p, err := range v.Pods() {
		if err != nil || p.State != rollout.Pending || p.Node == "" || len(p.Containers) == 0 {
			continue
		}
		var images []string
		always := false
		for _, c := range p.Containers {
			if !slices.Contains(images, c.ToImage) {
				images = append(images, c.ToImage)
			}
			always = always || c.PullPolicy == string(corev1.PullAlways)
		}
		slices.Sort(images)
		if _, seen := out[p.Node]; !seen {
			out[p.Node] = want{images: images, always: always}
		}
	}
	return out
}

// LabelUpgrade names the rollout a pre-pull pod was started ahead for.
const LabelUpgrade = "inplace.dev/prepull-for"

// tidy deletes the pre-pull pods started ahead for a rollout that no
// longer runs (completed, halted, superseded): a pod of it that was never
// planned would otherwise hold its node's slot until the sweep.
func (f *Function) tidy(ctx context.Context, cfg config.Defaults, upgradeID string) {
	pods, err := f.d.Reader.Pods(ctx, cfg.PrepullNamespace, labels.SelectorFromSet(labels.Set{
		LabelManagedBy: ManagedBy, LabelComponent: Component, LabelUpgrade: upgradeID}))
	if err != nil {
		f.d.Log.Warn("tidy pre-pulls", "rollout", upgradeID, "err", err)
		return
	}
	for i := range pods {
		if err := f.delete(ctx, &pods[i]); err != nil { // a pod deleted already is left alone
			f.d.Log.Warn("tidy pre-pulls", "rollout", upgradeID, "pod", pods[i].Name, "err", err)
		}
	}
}
