package prometheus

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// answer is the envelope of every /api/v1 reply.
type answer struct {
	Status    string   `json:"status"`
	ErrorType string   `json:"errorType"`
	Error     string   `json:"error"`
	Warnings  []string `json:"warnings"`
	Data      struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// decode reads an answer: a JSON envelope with status success and a
// scalar or vector result.
func decode(status int, contentType string, body []byte) (*float64, error) {
	var a answer
	if err := json.Unmarshal(body, &a); err != nil || a.Status == "" {
		return nil, classify(status, fmt.Errorf("HTTP %d, %s, not a Prometheus answer: %.200q", status, contentType, body))
	}
	if a.Status != "success" {
		return nil, classify(status, fmt.Errorf("HTTP %d: %s: %s", status, a.ErrorType, a.Error))
	}
	switch a.Data.ResultType {
	case "scalar":
		var v [2]any
		if err := json.Unmarshal(a.Data.Result, &v); err != nil {
			return nil, fmt.Errorf("scalar result: %w", err)
		}
		return number(v)
	case "vector":
		var vs []sample
		if err := json.Unmarshal(a.Data.Result, &vs); err != nil {
			return nil, fmt.Errorf("vector result: %w", err)
		}
		switch len(vs) {
		case 0:
			return nil, nil
		case 1:
			return number(vs[0].Value)
		}
		return nil, classify(status, fmt.Errorf("%w: %d series, want one (aggregate the query, e.g. sum(...)): %s",
			errRefused, len(vs), labels(vs)))
	}
	return nil, classify(status, fmt.Errorf("%w: result type %q, want a scalar or a vector", errRefused, a.Data.ResultType))
}

// number reads a sample's [time, "value"]; "NaN" and "+Inf" are numbers
// to Prometheus and to the analysis, which counts them inconclusive.
func number(v [2]any) (*float64, error) {
	s, ok := v[1].(string)
	if !ok {
		return nil, fmt.Errorf("sample value %v: want a string", v[1])
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("sample value %q: %w", s, err)
	}
	return &f, nil
}

func labels(vs []sample) string {
	var out []string
	for i, s := range vs {
		if i == 3 {
			out = append(out, "...")
			break
		}
		out = append(out, fmt.Sprint(s.Metric))
	}
	return strings.Join(out, ", ")
}
