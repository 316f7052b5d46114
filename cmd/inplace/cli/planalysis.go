package cli

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/functions/computespec"
	"github.com/inplace-dev/inplace/pkg/core/analysis"
	"github.com/inplace-dev/inplace/pkg/core/imageref"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// workloadPlan is compute-spec's plan of a workload with the analysis
// steps its inplace.dev/analysis annotation puts before the waves.
type workloadPlan struct {
	computespec.WorkloadPlan
	Analysis *analysisPlan `json:"analysis,omitempty"`
}

// analysisPlan is what a push would go through: the steps of the spec,
// each resolved against the workload's pods, then the remaining waves.
type analysisPlan struct {
	// From is where the spec is: the annotation, or configmap:NAME/KEY.
	From string `json:"from"`
	// Error is why the spec cannot be read or does not parse.
	Error string     `json:"error,omitempty"`
	Steps []stepPlan `json:"steps,omitempty"`
	// Remaining are the pods of the waves after the last step.
	Remaining [][]*rollout.Pod `json:"remaining,omitempty"`
}

// stepPlan is one step: a canary (Pods run the new version once Move
// moved) with its bake and queries, or an approval.
type stepPlan struct {
	Approval bool   `json:"approval,omitempty"`
	Canary   string `json:"canary,omitempty"`
	// Pods is how many pods run the new version once the step's wave is done.
	Pods     int                `json:"pods,omitempty"`
	Replicas int                `json:"replicas,omitempty"`
	Move     []*rollout.Pod     `json:"move,omitempty"`
	Bake     string             `json:"bake,omitempty"`
	Analysis *analysis.Analysis `json:"measure,omitempty"`
	Queries  []queryPlan        `json:"queries,omitempty"`
}

// queryPlan is a query rendered for the step's canary (and baseline) pods.
type queryPlan struct {
	Name       string  `json:"name"`
	Query      string  `json:"query"`
	Baseline   string  `json:"baseline,omitempty"`
	Comparison string  `json:"comparison"`
	Threshold  float64 `json:"threshold"`
	Error      string  `json:"error,omitempty"`
}

// withAnalysis adds to each plan the analysis its workload asks for, the
// spec read from the annotation or the ConfigMap it names.
func withAnalysis(ctx context.Context, s *kubeSession, snap *kube.Snapshot, plans []computespec.WorkloadPlan) ([]workloadPlan, error) {
	out := make([]workloadPlan, 0, len(plans))
	for _, p := range plans {
		wp := workloadPlan{WorkloadPlan: p}
		w, ok, err := snap.Get(p.Workload)
		if err != nil {
			return nil, err
		}
		if ok && p.Skip == "" {
			spec, from, err := specOf(ctx, s, w)
			switch {
			case from == "":
			case err != nil:
				wp.Analysis = &analysisPlan{From: from, Error: err.Error()}
			default:
				a := planSteps(spec, w, p.Waves)
				a.From = from
				wp.Analysis = &a
			}
		}
		out = append(out, wp)
	}
	return out, nil
}

// specOf reads w's analysis spec; from is "" when w asks for none.
func specOf(ctx context.Context, s *kubeSession, w kube.Workload) (analysis.Spec, string, error) {
	src, ok, err := analysis.FromAnnotations(w.Meta.Annotations)
	if !ok {
		return analysis.Spec{}, "", nil
	}
	from := "annotation " + analysis.AnnotationAnalysis
	if src.ConfigMap != "" {
		from = "configmap:" + src.ConfigMap + "/" + src.Key
	}
	if err != nil {
		return analysis.Spec{}, from, err
	}
	text := src.Inline
	if src.ConfigMap != "" {
		cm, err := s.client.CoreV1().ConfigMaps(w.Ref.Namespace).Get(ctx, src.ConfigMap, metav1.GetOptions{})
		if err != nil {
			return analysis.Spec{}, from, fmt.Errorf("read ConfigMap %s/%s: %w", w.Ref.Namespace, src.ConfigMap, s.reach(err))
		}
		v, ok := cm.Data[src.Key]
		if !ok {
			return analysis.Spec{}, from, fmt.Errorf("ConfigMap %s/%s has no key %s", w.Ref.Namespace, src.ConfigMap, src.Key)
		}
		text = v
	}
	spec, err := analysis.Parse(text)
	return spec, from, err
}

// planSteps resolves spec against w and the waves compute-spec foresees:
// the pods move in the waves' order, each canary step taking pods until
// its count runs the new version; the pods left are the remaining waves.
func planSteps(spec analysis.Spec, w kube.Workload, waves [][]*rollout.Pod) analysisPlan {
	order := slices.Concat(waves...)
	replicas := w.Replicas
	if replicas == 0 {
		replicas = len(order)
	}
	var a analysisPlan
	moved := 0
	for _, st := range spec.Steps {
		if st.Approval {
			a.Steps = append(a.Steps, stepPlan{Approval: true})
			continue
		}
		n := min(max(st.CanaryPods(replicas), moved), len(order))
		sp := stepPlan{Canary: st.Canary.String(), Pods: n, Replicas: replicas, Move: order[moved:n],
			Bake: string(st.Bake), Analysis: st.Analysis}
		moved = n
		if st.Analysis != nil {
			t := target(w, order, moved)
			for _, q := range st.Analysis.Queries {
				sp.Queries = append(sp.Queries, renderQuery(q, spec.Args, t))
			}
		}
		a.Steps = append(a.Steps, sp)
	}
	left := map[string]bool{}
	for _, p := range order[moved:] {
		left[p.Name] = true
	}
	for _, wave := range waves {
		var rest []*rollout.Pod
		for _, p := range wave {
			if left[p.Name] {
				rest = append(rest, p)
			}
		}
		if len(rest) > 0 {
			a.Remaining = append(a.Remaining, rest)
		}
	}
	return a
}

// target is what the queries of a step see once the first moved pods of
// order run the new version.
func target(w kube.Workload, order []*rollout.Pod, moved int) analysis.Target {
	t := analysis.Target{Namespace: w.Ref.Namespace, Workload: w.Ref.Name, Kind: w.Ref.Kind}
	for i, p := range order {
		if i < moved {
			t.Canary = append(t.Canary, p.Name)
		} else {
			t.Baseline = append(t.Baseline, p.Name)
		}
	}
	if len(order) > 0 && len(order[0].Containers) > 0 {
		c := order[0].Containers[0]
		t.Image, t.PreviousImage = c.ToImage, c.FromImage
		t.Version, t.PreviousVersion = tagOf(c.ToImage), tagOf(c.FromImage)
	}
	return t
}

func tagOf(image string) string {
	r, err := imageref.Parse(image)
	if err != nil {
		return ""
	}
	return r.Tag
}

func renderQuery(q analysis.Query, args map[string]string, t analysis.Target) queryPlan {
	qp := queryPlan{Name: q.Name, Comparison: q.Comparison, Threshold: q.Threshold}
	var err error
	if qp.Query, err = analysis.Render(q, args, t, false); err != nil {
		qp.Error = err.Error()
		return qp
	}
	if q.Baseline {
		if qp.Baseline, err = analysis.Render(q, args, t, true); err != nil {
			qp.Error = err.Error()
		}
	}
	return qp
}
