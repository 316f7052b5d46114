package realnode

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEvictionThresholdsAreAbsolute: the node's disk thresholds are sizes,
// not shares of the machine's disk, which on a large, nearly full shared
// disk would put every node under DiskPressure.
func TestEvictionThresholdsAreAbsolute(t *testing.T) {
	b, err := kubeletConfig(&node{dir: t.TempDir(), ip: "10.0.0.2"}, "ca.crt", "resolv.conf")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		EvictionHard map[string]string `json:"evictionHard"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"memory.available": "100Mi", "nodefs.available": "256Mi", "imagefs.available": "256Mi", "nodefs.inodesFree": "1%"}
	if d := cmp.Diff(want, cfg.EvictionHard); d != "" {
		t.Errorf("evictionHard (-want +got):\n%s", d)
	}
}
