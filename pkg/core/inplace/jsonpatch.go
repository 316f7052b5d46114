package inplace

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// op is one RFC 6902 operation.
type op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

func testOp(path string, v any) op    { return op{Op: "test", Path: path, Value: v} }
func replaceOp(path string, v any) op { return op{Op: "replace", Path: path, Value: v} }
func addOp(path string, v any) op     { return op{Op: "add", Path: path, Value: v} }
func removeOp(path string) op         { return op{Op: "remove", Path: path} }

// escape makes a map key a JSON-pointer token ("inplace.dev/state" →
// "inplace.dev~1state").
func escape(key string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

// setKeyOps sets key in the metadata map at base ("/metadata/annotations").
// When the object has no such map it adds the whole map, which would wipe a
// map someone added meanwhile, so it then also tests resourceVersion (pass
// "" when the patch tests it already).
func setKeyOps(rv, base string, current map[string]string, key, value string) []op {
	if current != nil {
		return []op{addOp(base+"/"+escape(key), value)}
	}
	add := addOp(base, map[string]string{key: value})
	if rv == "" {
		return []op{add}
	}
	return []op{testOp("/metadata/resourceVersion", rv), add}
}

// setKeysOps is setKeyOps for several keys, in key order.
func setKeysOps(rv, base string, current map[string]string, kv map[string]string) []op {
	if current == nil {
		add := addOp(base, kv)
		if rv == "" {
			return []op{add}
		}
		return []op{testOp("/metadata/resourceVersion", rv), add}
	}
	ops := make([]op, 0, len(kv))
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		ops = append(ops, addOp(base+"/"+escape(k), kv[k]))
	}
	return ops
}

func marshal(ops []op) ([]byte, error) {
	b, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("encode json patch: %w", err)
	}
	return b, nil
}
