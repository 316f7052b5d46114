package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// replicasManifest is where the project says how many replicas of each
// function it runs by default. Runs with several replicas per function
// are made only when it runs at least 2 of each: otherwise they would
// measure something the project does not claim to support (replicas
// sharing the work, never acting twice on one pod at the same time).
const replicasManifest = "config/plain/functions.yaml"

// replicasUnavailable says why runs with several replicas per function
// are not made ("" when they are supported). INPLACE_BENCH_FORCE_REPLICAS=1
// makes them anyway.
func replicasUnavailable(root string) string {
	if b, _ := strconv.ParseBool(os.Getenv("INPLACE_BENCH_FORCE_REPLICAS")); b {
		return ""
	}
	f, err := os.Open(filepath.Join(root, replicasManifest))
	if err != nil {
		return fmt.Sprintf("cannot tell whether several replicas are supported: %v", err)
	}
	defer f.Close()
	fewest, err := fewestReplicas(f)
	if err != nil {
		return fmt.Sprintf("cannot tell whether several replicas are supported: %s: %v", replicasManifest, err)
	}
	if fewest < 2 {
		return fmt.Sprintf("%s runs %d replica of a function: several replicas sharing the work are not on main yet "+
			"(INPLACE_BENCH_FORCE_REPLICAS=1 runs them anyway)", replicasManifest, fewest)
	}
	return ""
}

// fewestReplicas reads the Deployments of a multi-document manifest and
// returns the smallest spec.replicas (1 when unset, as the API server
// defaults it).
func fewestReplicas(r io.Reader) (int32, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	fewest, seen := int32(0), false
	for {
		var d appsv1.Deployment
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		if d.Kind != "Deployment" {
			continue
		}
		n := int32(1)
		if d.Spec.Replicas != nil {
			n = *d.Spec.Replicas
		}
		if !seen || n < fewest {
			fewest, seen = n, true
		}
	}
	if !seen {
		return 0, errors.New("no Deployment")
	}
	return fewest, nil
}
