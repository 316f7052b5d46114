package fleet

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/inplace-dev/inplace/events"
)

// MaxPolicyBytes bounds a policy: a larger text is refused before it is
// decoded.
const MaxPolicyBytes = 64 << 10

// MaxClusters bounds the clusters of a policy.
const MaxClusters = 256

// Policy is the promotion order of a fleet.
type Policy struct {
	// Workloads are the workloads a push moves in every cluster, as
	// "<kind>/<namespace>/<name>"; a cluster is done with a push when each
	// has a succeeded rollout of it there.
	Workloads []string `json:"workloads"`
	// Stages are promoted in order.
	Stages []Stage `json:"stages"`
}

// Stage is a set of clusters released together.
type Stage struct {
	Name     string   `json:"name"`
	Clusters []string `json:"clusters"`
	// Approval makes the stage wait for an approver before it starts.
	Approval bool `json:"approval,omitempty"`
	// Analysis makes the stage count as done only when its analysis
	// passed: each cluster's rollout of each workload reported its own
	// canary analysis (inplace.dev/analysis) Passed, or a verdict was
	// recorded for the stage. A rollout halted by its analysis halts the
	// fleet as any halt does; one that succeeded without a passed analysis
	// halts it as AnalysisMissing; a recorded Failed halts it.
	Analysis bool `json:"analysis,omitempty"`
}

// name is what a stage or cluster may be called: one NATS subject token.
var name = regexp.MustCompile(`^[a-z0-9]([a-z0-9_-]{0,61}[a-z0-9])?$`)

// ValidName says why s cannot name a stage or a cluster, or nil.
func ValidName(s string) error {
	if !name.MatchString(s) {
		return fmt.Errorf("want lower-case letters, digits, - and _ (at most 63), got %q", s)
	}
	return nil
}

// Parse reads a policy (YAML or JSON) and checks it whole; the error names
// the first field that is wrong (stages[1].clusters[0]). A field it does
// not know is an error.
func Parse(text string) (Policy, error) {
	if len(text) > MaxPolicyBytes {
		return Policy{}, fmt.Errorf("fleet policy: %d bytes, more than %d", len(text), MaxPolicyBytes)
	}
	var p Policy
	if err := yaml.UnmarshalStrict([]byte(text), &p); err != nil {
		return Policy{}, fmt.Errorf("fleet policy: %w", err)
	}
	if err := p.Validate(); err != nil {
		return Policy{}, fmt.Errorf("fleet policy: %w", err)
	}
	return p, nil
}

// Validate checks the policy; the error names the field.
func (p Policy) Validate() error {
	if len(p.Workloads) == 0 {
		return errors.New("workloads: want at least one <kind>/<namespace>/<name>")
	}
	for i, w := range p.Workloads {
		if _, err := ParseWorkload(w); err != nil {
			return fmt.Errorf("workloads[%d]: %w", i, err)
		}
	}
	if len(p.Stages) == 0 {
		return errors.New("stages: want at least one stage")
	}
	stages, clusters := map[string]bool{}, map[string]string{}
	for i, s := range p.Stages {
		if err := s.validate(stages, clusters); err != nil {
			return fmt.Errorf("stages[%d].%w", i, err)
		}
	}
	if len(clusters) > MaxClusters {
		return fmt.Errorf("stages: %d clusters, more than %d", len(clusters), MaxClusters)
	}
	return nil
}

func (s Stage) validate(stages map[string]bool, clusters map[string]string) error {
	switch {
	case !name.MatchString(s.Name):
		return fmt.Errorf("name: want lower-case letters, digits, - and _ (at most 63), got %q", s.Name)
	case stages[s.Name]:
		return fmt.Errorf("name: stage %q twice", s.Name)
	case len(s.Clusters) == 0:
		return errors.New("clusters: want at least one cluster")
	}
	stages[s.Name] = true
	for j, c := range s.Clusters {
		if !name.MatchString(c) {
			return fmt.Errorf("clusters[%d]: want lower-case letters, digits, - and _ (at most 63), got %q", j, c)
		}
		if other, ok := clusters[c]; ok {
			return fmt.Errorf("clusters[%d]: cluster %q is already in stage %q", j, c, other)
		}
		clusters[c] = s.Name
	}
	return nil
}

// ParseWorkload reads "<kind>/<namespace>/<name>" (events.ObjectRef.String).
func ParseWorkload(s string) (events.ObjectRef, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 || parts[1] == "" || parts[2] == "" {
		return events.ObjectRef{}, fmt.Errorf("want <kind>/<namespace>/<name>, got %q", s)
	}
	switch parts[0] {
	case "Deployment", "StatefulSet", "DaemonSet", "Pod":
	default:
		return events.ObjectRef{}, fmt.Errorf("kind: want Deployment, StatefulSet, DaemonSet or Pod, got %q", parts[0])
	}
	return events.ObjectRef{Kind: parts[0], Namespace: parts[1], Name: parts[2]}, nil
}

// StageOf is the stage of cluster, or -1 when the policy does not name it.
func (p Policy) StageOf(cluster string) int {
	for i, s := range p.Stages {
		for _, c := range s.Clusters {
			if c == cluster {
				return i
			}
		}
	}
	return -1
}
