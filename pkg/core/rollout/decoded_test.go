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

// A writer's record is found by its bytes before the writer knows the
// revision it was written at (a watch of the bucket can be first), and
// by the revision afterwards; other bytes are decoded as they are.
func TestExpectedRecordIsFoundByItsBytes(t *testing.T) {
	var d Decoded
	mine := &Rollout{UpgradeID: "u-9", Phase: Running}
	raw, err := json.Marshal(mine)
	if err != nil {
		t.Fatal(err)
	}
	d.Expect("Deployment/ns/web", raw, mine)
	if got, err := d.Get("Deployment/ns/web", 9, raw); err != nil || got != mine {
		t.Fatalf("revision 9, the expected bytes: %p, %v; want the writer's record %p", got, err, mine)
	}
	if got, _ := d.Get("Deployment/ns/web", 9, []byte("{not json")); got != mine {
		t.Fatal("revision 9 once known is not the writer's record")
	}
	other, err := json.Marshal(&Rollout{UpgradeID: "u-10", Phase: Halted})
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Get("Deployment/ns/web", 10, other)
	if err != nil || got == mine || got.UpgradeID != "u-10" {
		t.Fatalf("revision 10, other bytes: %+v, %v; want them decoded", got, err)
	}
	var none *Decoded
	none.Expect("Deployment/ns/web", raw, mine) // a nil Decoded keeps nothing
}

// A reader that read a key just before a write still finds its revision
// decoded: the last few revisions of a key are kept, not only the newest.
func TestRecentRevisionsStayDecoded(t *testing.T) {
	var d Decoded
	raw := func(id string) []byte {
		b, err := json.Marshal(&Rollout{UpgradeID: id})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	seven, _ := d.Get("Deployment/ns/web", 7, raw("u-7"))
	d.Get("Deployment/ns/web", 8, raw("u-8"))
	d.Get("Deployment/ns/web", 9, raw("u-9"))
	if again, _ := d.Get("Deployment/ns/web", 7, raw("u-7")); again != seven {
		t.Fatal("revision 7 was decoded again after 8 and 9; want it kept")
	}
	for rev := uint64(10); rev < 20; rev++ {
		d.Get("Deployment/ns/web", rev, raw("u"))
	}
	if n := len(d.last["Deployment/ns/web"]); n != keepRevisions {
		t.Errorf("%d revisions kept; want %d", n, keepRevisions)
	}
}
