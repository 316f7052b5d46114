package analysis

import (
	"errors"
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// MaxSpecBytes bounds a spec: an annotation or ConfigMap value larger than
// this is refused before it is decoded.
const MaxSpecBytes = 64 << 10

// Parse reads a spec (YAML or JSON) and checks it whole; the error names
// the first field that is wrong (steps[1].analysis.queries[0].comparison).
// A field it does not know is an error, so a typo is never ignored.
func Parse(text string) (Spec, error) {
	if len(text) > MaxSpecBytes {
		return Spec{}, fmt.Errorf("analysis spec: %d bytes, more than %d", len(text), MaxSpecBytes)
	}
	var s Spec
	if err := yaml.UnmarshalStrict([]byte(text), &s); err != nil {
		return Spec{}, fmt.Errorf("analysis spec: %w", err)
	}
	if err := s.Validate(); err != nil {
		return Spec{}, fmt.Errorf("analysis spec: %w", err)
	}
	return s, nil
}

// Validate checks every step; the error names the field.
func (s Spec) Validate() error {
	if len(s.Steps) == 0 {
		return errors.New("steps: want at least one step")
	}
	for k := range s.Args {
		if !isIdent(k) {
			return fmt.Errorf("args.%s: want a name of letters, digits and _", k)
		}
	}
	for i, st := range s.Steps {
		if err := st.validate(s.Args); err != nil {
			return fmt.Errorf("steps[%d].%w", i, err)
		}
	}
	return nil
}

func (st Step) validate(args map[string]string) error {
	switch {
	case st.Approval && (st.Canary != nil || st.Bake != "" || st.Analysis != nil):
		return errors.New("approval: an approval step has no canary, bake or analysis")
	case !st.Approval && st.Canary == nil:
		return errors.New("canary: want a number of pods or a percent (or approval: true)")
	case st.Approval:
		return nil
	}
	if err := checkCanary(*st.Canary); err != nil {
		return fmt.Errorf("canary: %w", err)
	}
	if err := st.Bake.check(); err != nil {
		return fmt.Errorf("bake: %w", err)
	}
	if st.Analysis == nil {
		return nil
	}
	if err := st.Analysis.validate(args); err != nil {
		return fmt.Errorf("analysis.%w", err)
	}
	return nil
}

func checkCanary(c intstr.IntOrString) error {
	if c.Type == intstr.Int {
		if c.IntVal < 1 {
			return fmt.Errorf("want at least 1 pod, got %d", c.IntVal)
		}
		return nil
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(&c, 100, true)
	if err != nil || v < 1 || v > 100 {
		return fmt.Errorf("want a number or a percent from 1%% to 100%%, got %q", c.StrVal)
	}
	return nil
}

func (a *Analysis) validate(args map[string]string) error {
	switch {
	case len(a.Queries) == 0:
		return errors.New("queries: want at least one query")
	case a.Count < 0:
		return fmt.Errorf("count: want at least 1, got %d", a.Count)
	case a.FailureLimit < 0:
		return fmt.Errorf("failureLimit: want at least 0, got %d", a.FailureLimit)
	case a.ErrorLimit != nil && *a.ErrorLimit < 0:
		return fmt.Errorf("errorLimit: want at least 0, got %d", *a.ErrorLimit)
	}
	if err := a.Interval.check(); err != nil {
		return fmt.Errorf("interval: %w", err)
	}
	if a.Interval != "" && a.Interval.D() == 0 {
		return errors.New("interval: want more than 0")
	}
	if err := a.Deadline.check(); err != nil {
		return fmt.Errorf("deadline: %w", err)
	}
	names := map[string]bool{}
	for i, q := range a.Queries {
		if names[q.Name] {
			return fmt.Errorf("queries[%d].name: %q twice", i, q.Name)
		}
		names[q.Name] = true
		if err := q.validate(args); err != nil {
			return fmt.Errorf("queries[%d].%w", i, err)
		}
	}
	return nil
}

func (q Query) validate(args map[string]string) error {
	switch {
	case q.Name == "":
		return errors.New("name: want a name")
	case q.Query == "":
		return errors.New("query: want a PromQL expression")
	case !validComparison(q.Comparison):
		return fmt.Errorf("comparison: want <, <=, > or >=, got %q", q.Comparison)
	case math.IsNaN(q.Threshold) || math.IsInf(q.Threshold, 0):
		return errors.New("threshold: want a finite number")
	}
	if _, err := render(q.Query, sampleVars(args)); err != nil {
		return fmt.Errorf("query: %w", err)
	}
	return nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9'
		if !ok {
			return false
		}
	}
	return true
}
