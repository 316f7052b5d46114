package rollout

import (
	"encoding/json"
	"testing"
)

func TestDecodedSharesOneRevision(t *testing.T) {
	raw := func(id string) []byte {
		b, err := json.Marshal(&Rollout{UpgradeID: id, Phase: Running})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var d Decoded
	a, err := d.Get("Deployment/ns/web", 7, raw("u-7"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.Get("Deployment/ns/web", 7, raw("u-7"))
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatal("the same revision was decoded twice, not shared")
	}
	c, _ := d.Get("Deployment/ns/web", 8, raw("u-8"))
	if c == a || c.UpgradeID != "u-8" {
		t.Fatalf("revision 8 read as %+v, the value of revision 7's decode", c)
	}
	if old, _ := d.Get("Deployment/ns/web", 7, raw("u-7")); old.UpgradeID != "u-7" {
		t.Fatalf("an older revision read after a newer one: %q, want u-7", old.UpgradeID)
	}
	if again, _ := d.Get("Deployment/ns/web", 8, raw("u-8")); again != c {
		t.Fatal("an older revision's read replaced the newer one cached")
	}
	x, _ := d.Get("Deployment/ns/web", 0, raw("u-0"))
	y, _ := d.Get("Deployment/ns/web", 0, raw("u-0"))
	if x == y {
		t.Fatal("revision 0 (unknown) was cached")
	}
	if other, _ := d.Get("Deployment/ns/api", 8, raw("u-api")); other.UpgradeID != "u-api" {
		t.Fatalf("another key at the same revision read as %q", other.UpgradeID)
	}
	if _, err := d.Get("Deployment/ns/web", 9, []byte("{")); err == nil {
		t.Fatal("a record that is not JSON was decoded without an error")
	}
	var none *Decoded
	if r, err := none.Get("k", 1, raw("u-1")); err != nil || r.UpgradeID != "u-1" {
		t.Fatalf("nil Decoded: %v, %v", r, err)
	}
}
