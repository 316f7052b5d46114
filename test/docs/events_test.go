package docs

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/events"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
)

// eventsSection is the table of every event type the project emits, in
// chain order, then the CDEvents it emits and the foreign types it takes.
func eventsSection(t *testing.T) string {
	dir := root(t)
	files, err := filepath.Glob(filepath.Join(dir, "events", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var src []string
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			src = append(src, f)
		}
	}
	consts, _ := stringConsts(t, dir, src)
	var b strings.Builder
	b.WriteString("| event (subject `inplace.<event>`) | published by | consumed by | what it says |\n|---|---|---|---|\n")
	for _, typ := range append(slices.Clone(events.Types), events.CDTypes...) {
		fmt.Fprintf(&b, "| `%s`<br>`%s` | %s | %s | %s |\n", events.Short(typ), typ,
			publishers(typ), consumers(typ), cell(eventDoc(t, typ, consts[typ])))
	}
	b.WriteString("\nAccepted as inputs, adapted onto the project's own types:\n\n| type | what it becomes |\n|---|---|\n")
	for _, typ := range []string{events.APIServerSourceUpdate, events.APIServerSourceAdd, events.CDEventArtifactPublishedPrefix} {
		name := typ
		if strings.HasSuffix(typ, ".") {
			name += "*"
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", name, cell(eventDoc(t, typ, consts[typ])))
	}
	return b.String()
}

// publishers are the bus identities that may publish typ, the operator
// aside (it may publish everything).
func publishers(typ string) string {
	var out []string
	for _, r := range busauth.Roles() {
		if slices.Contains(r.Publishes, typ) {
			out = append(out, r.Name)
		}
	}
	if len(out) == 0 {
		return "operator"
	}
	return strings.Join(out, ", ")
}

// consumers are the functions whose durable consumer takes typ.
func consumers(typ string) string {
	var out []string
	for _, c := range app.Consumers {
		if slices.Contains(c.Types, typ) {
			out = append(out, c.Name)
		}
	}
	if len(out) == 0 {
		return "—"
	}
	return strings.Join(out, ", ")
}

// eventDoc is the doc comment of the constant declaring typ.
func eventDoc(t *testing.T, typ string, ds []declared) string {
	t.Helper()
	for _, d := range ds {
		if d.doc != "" {
			return sentence(d.doc, d.name, nil)
		}
	}
	t.Errorf("event type %s: its constant has no doc comment in package events: write one saying what the event means", typ)
	return ""
}
