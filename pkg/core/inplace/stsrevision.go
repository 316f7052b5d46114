package inplace

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/rand"
)

// StatefulSetRevisionName is the name of the ControllerRevision the
// StatefulSet controller makes for sts's template: "<name>-<hash>", the FNV
// hash of the strategic-merge patch that replaces the template (and of the
// collision count), as the controller's getPatch, newRevision and
// HashControllerRevision compute it (pkg/controller/statefulset and
// pkg/controller/history, v1.35). Knowing it before the controller acts
// lets the template sync relabel the pods right after its patch, so the
// controller finds them updated as soon as it makes the revision. The
// controller's own status.updateRevision stays the truth: a collision (a
// different name) is relabelled again.
func StatefulSetRevisionName(sts *appsv1.StatefulSet) (string, error) {
	b, err := json.Marshal(sts.Spec.Template)
	if err != nil {
		return "", fmt.Errorf("encode template of %s: %w", sts.Name, err)
	}
	var template map[string]any
	if err := json.Unmarshal(b, &template); err != nil {
		return "", fmt.Errorf("decode template of %s: %w", sts.Name, err)
	}
	template["$patch"] = "replace"
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"template": template}})
	if err != nil {
		return "", fmt.Errorf("encode revision patch of %s: %w", sts.Name, err)
	}
	var collisions int32 // the controller always hashes the count, 0 when unset
	if c := sts.Status.CollisionCount; c != nil {
		collisions = *c
	}
	hf := fnv.New32()
	hf.Write(patch)
	hf.Write([]byte(strconv.FormatInt(int64(collisions), 10)))
	return revisionName(sts.Name, rand.SafeEncodeString(fmt.Sprint(hf.Sum32()))), nil
}

// revisionName is history.ControllerRevisionName: the prefix cut to 223
// characters so the name stays a valid DNS subdomain.
func revisionName(prefix, hash string) string {
	if len(prefix) > 223 {
		prefix = prefix[:223]
	}
	return prefix + "-" + hash
}
