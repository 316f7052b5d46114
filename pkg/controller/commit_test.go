package controller

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/core/rollout"
)

// A write starts from a copy of the process's own last write of the key
// when the key still holds it (no parse of the whole record), and from
// the bytes otherwise (another replica wrote); never from the shared
// record itself: its pod entries are shared, and a change of one (through
// the rollout package) leaves the shared record as it was.
func TestAWriteStartsFromItsOwnLastWrite(t *testing.T) {
	dec := &rollout.Decoded{}
	f := New(Deps{Decoded: dec})
	mine := &rollout.Rollout{UpgradeID: "u-1", Phase: rollout.Running,
		Pods: map[string]*rollout.Pod{"web-1": {Name: "web-1", UID: "uid-1", UpgradeID: "u-1", State: rollout.InFlight}}}
	raw, err := json.Marshal(mine)
	if err != nil {
		t.Fatal(err)
	}
	dec.Expect("Deployment/shop/web", raw, mine)
	got, err := f.decodeToWrite("Deployment/shop/web", raw)
	if err != nil {
		t.Fatal(err)
	}
	if got == mine {
		t.Fatal("the write got the shared record itself; want a copy")
	}
	o := events.OutcomeData{Plan: events.Plan{UpgradeID: "u-1", Pod: events.PodRef{Name: "web-1", UID: "uid-1"}}, Outcome: events.OutcomeSucceeded}
	rollout.Record(got, events.UpgradeSucceeded, o, "in-1", time.Now())
	if got.Pods["web-1"].State != rollout.Succeeded || mine.Pods["web-1"].State != rollout.InFlight {
		t.Errorf("the outcome left the pod %s in the copy and %s in the shared record; want Succeeded and InFlight",
			got.Pods["web-1"].State, mine.Pods["web-1"].State)
	}
	// The copy comes from the record, not from parsing the bytes: bytes no
	// parser would take still give it.
	dec.Expect("Deployment/shop/web", []byte("{not json, but mine"), mine)
	if got, err := f.decodeToWrite("Deployment/shop/web", []byte("{not json, but mine")); err != nil || got.UpgradeID != "u-1" {
		t.Fatalf("the process's own last write was parsed again: %+v, %v; want a copy of it", got, err)
	}
	// Written with other bytes (a replica's write): decoded from them.
	theirs, err := json.Marshal(&rollout.Rollout{UpgradeID: "u-2", Phase: rollout.Halted})
	if err != nil {
		t.Fatal(err)
	}
	got, err = f.decodeToWrite("Deployment/shop/web", theirs)
	if err != nil || got.UpgradeID != "u-2" {
		t.Fatalf("another writer's record read as %+v, %v; want u-2 decoded", got, err)
	}
	if _, err := f.decodeToWrite("Deployment/shop/web", []byte("{not json")); err == nil {
		t.Error("bytes that are not a record were accepted")
	}
}
