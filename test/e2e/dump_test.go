package e2e_test

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// dump is what a test that waited in vain shows of the rollout of app (a
// Deployment or StatefulSet of that name): its rollout record, the Events
// of the namespace and the bus events about app, in order.
func (e *env) dump(app string) string {
	e.t.Helper()
	var b strings.Builder
	for _, kind := range []string{"Deployment", "StatefulSet"} {
		key := kind + "/" + e.ns + "/" + app
		raw, _, err := e.s.App.KV.Get(e.t.Context(), key)
		switch {
		case err != nil:
			fmt.Fprintf(&b, "record %s: %v\n", key, err)
		case raw != nil:
			fmt.Fprintf(&b, "record %s: %s\n", key, raw)
		}
	}
	if list, err := e.w.Client().CoreV1().Events(e.ns).List(e.t.Context(), metav1.ListOptions{}); err != nil {
		fmt.Fprintf(&b, "events: %v\n", err)
	} else {
		items := list.Items
		sort.SliceStable(items, func(i, j int) bool { return items[i].LastTimestamp.Before(&items[j].LastTimestamp) })
		for _, ev := range items {
			fmt.Fprintf(&b, "event %s %s/%s %s: %s (x%d)\n", ev.LastTimestamp.UTC().Format("15:04:05"),
				ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.Reason, ev.Message, ev.Count)
		}
	}
	for _, ev := range e.stream() {
		if strings.Contains(ev.Subject(), e.ns+"/"+app) {
			fmt.Fprintf(&b, "bus %s %s %s %s %s\n", ev.Time().UTC().Format("15:04:05.000"), ev.Type(), ev.ID(), ev.Source(), ev.Subject())
		}
	}
	return b.String()
}
