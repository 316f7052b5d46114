package bench

import (
	"bytes"
	"context"
	"fmt"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
)

// writes counts the API server's mutating requests so far, by resource.
func writes(ctx context.Context, c kubernetes.Interface) (map[string]float64, error) {
	raw, err := c.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("apiserver metrics: %w", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parse apiserver metrics: %w", err)
	}
	out := map[string]float64{}
	fam := fams["apiserver_request_total"]
	if fam == nil {
		return out, nil
	}
	for _, m := range fam.Metric {
		var verb, resource, sub string
		for _, l := range m.Label {
			switch l.GetName() {
			case "verb":
				verb = l.GetValue()
			case "resource":
				resource = l.GetValue()
			case "subresource":
				sub = l.GetValue()
			}
		}
		switch verb {
		case "POST", "PUT", "PATCH", "DELETE", "APPLY", "CREATE", "UPDATE":
		default:
			continue
		}
		if resource == "leases" || resource == "nodes" || resource == "events" {
			continue // heartbeats and Events are not the rollout's writes
		}
		if sub != "" {
			resource += "/" + sub
		}
		out[resource] += m.GetCounter().GetValue()
	}
	return out, nil
}

// delta is after − before, summed.
func delta(before, after map[string]float64) (float64, map[string]float64) {
	total, per := 0.0, map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			per[k] = d
			total += d
		}
	}
	return total, per
}
