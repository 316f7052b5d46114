package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/tools/history"
	"github.com/inplace-dev/inplace/pkg/tools/history/historytest"
)

// A finished rollout, traced out of a stream that also holds another
// workload's rollout of the same push and an unrelated push.
func TestTraceOfAFinishedRollout(t *testing.T) {
	w := newToolWorld(t)
	web := rolloutFor("web", "1.3.0", true)
	// The same push also rolls out shop/cart: its events share the push.
	cart := web
	cart.Workload = events.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "cart"}
	cart.Pods = []historytest.Pod{{Name: "cart-0", UID: "uid-cart-0", Node: "node-3", Wave: 1}}
	w.publish(t, chain(t, web))
	w.publish(t, chain(t, cart))
	w.publish(t, chain(t, rolloutFor("api", "2.0.0", false)))
	deadLetter(t, w, "inplace.container.restarted", "verify", "no plan for the pod")

	tree, _, err := w.run(t.Context(), t, "", "trace", web.UpgradeID())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(tree), "\n")
	if !strings.HasPrefix(lines[0], "upgrade "+web.UpgradeID()+"  Deployment/shop/web → registry.example/shop/web:1.3.0@sha256:0b31b1c02ff4  halted after ") {
		t.Errorf("header: %s", lines[0])
	}
	for _, want := range []string{
		"├── ", "image.pushed", "registry.example/shop/web:1.3.0@sha256:0b31b1c02ff4 (distribution)",
		"├── shop/web-0  wave 1  node-1  succeeded in ",
		"├── shop/web-1  wave 2  node-2  rolledback ImagePullBackOff in ",
		"pod.updated         +100ms  Running; app waiting ImagePullBackOff: Back-off pulling image",
		`upgrade.rolledback  +100ms  rolledback ImagePullBackOff: Back-off pulling image "registry.example/shop/web:1.3.0"`,
		"rollout.halted      +100ms  halted 1/2 succeeded, 1 rolled back",
	} {
		if !strings.Contains(tree, want) {
			t.Errorf("tree lacks %q:\n%s", want, tree)
		}
	}
	if dl := linesWith(tree, "dead-lettered by verify: no plan for the pod"); len(dl) != 1 || !strings.Contains(dl[0], "│   └── ") ||
		!strings.Contains(dl[0], "container.restarted") {
		t.Errorf("the dead letter is not web-0's last step: %q", dl)
	}
	for _, absent := range []string{"cart", "api", "2.0.0"} {
		if strings.Contains(tree, absent) {
			t.Errorf("tree shows %q of another rollout:\n%s", absent, tree)
		}
	}
	// One push line, six steps of web-0 (plus its dead letter), five of web-1.
	if got := len(lines); got != 1+1+1+7+1+5+1 {
		t.Errorf("%d lines:\n%s", got, tree)
	}

	table, _, err := w.run(t.Context(), t, "", "trace", web.UpgradeID(), "-o", "table")
	if err != nil {
		t.Fatal(err)
	}
	if rows := strings.Split(strings.TrimSpace(table), "\n"); len(rows) != 1+len(chain(t, web))+1 ||
		!strings.HasPrefix(rows[0], "TIME") || !strings.Contains(rows[1], "image.pushed") ||
		!strings.Contains(rows[len(rows)-2], "rollout.halted") || !strings.Contains(rows[len(rows)-1], "dead-lettered") {
		t.Errorf("table:\n%s", table)
	}

	raw, _, err := w.run(t.Context(), t, "", "trace", web.UpgradeID(), "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var tr history.Trace
	if err := json.Unmarshal([]byte(raw), &tr); err != nil {
		t.Fatalf("-o json: %v\n%s", err, raw)
	}
	if tr.Push == nil || tr.State != "halted" || len(tr.Pods) != 2 || tr.Pods[1].Reason != "ImagePullBackOff" ||
		!strings.Contains(tr.Pods[1].Message, "Back-off pulling image") || tr.Pods[1].TookMillis <= 0 {
		t.Errorf("json trace: %+v", tr)
	}
}

func TestTraceUnknownUpgrade(t *testing.T) {
	w := newToolWorld(t)
	w.publish(t, chain(t, rolloutFor("web", "1.3.0", false)))
	_, _, err := w.run(t.Context(), t, "", "trace", "u-000000000000")
	if err == nil || !strings.Contains(err.Error(), "no event of this upgrade") {
		t.Errorf("err = %v", err)
	}
}
