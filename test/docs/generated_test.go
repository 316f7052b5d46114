package docs

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "write the generated sections of docs/reference.md (make docs)")

// root is the module's root directory, where go.mod is.
func root(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// section is one generated part of a document, between its markers.
type section struct {
	name string
	text func(t *testing.T) string
}

func beginMarker(name string) string { return "<!-- BEGIN GENERATED: " + name + " -->\n" }
func endMarker(name string) string   { return "<!-- END GENERATED: " + name + " -->" }

// replaceSection puts text between the markers of name in doc.
func replaceSection(doc, name, text string) (string, error) {
	begin, end := beginMarker(name), endMarker(name)
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("the markers %q … %q are missing or out of order", strings.TrimSpace(begin), end)
	}
	return doc[:i+len(begin)] + text + doc[j:], nil
}

// TestReferenceIsCurrent: the generated tables of docs/reference.md are
// what the code says now. With -update (make docs) it writes them.
func TestReferenceIsCurrent(t *testing.T) {
	path := filepath.Join(root(t), "docs", "reference.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	want := got
	for _, s := range []section{{"annotations", annotationsSection}, {"flags", flagsSection}, {"events", eventsSection}} {
		if want, err = replaceSection(want, s.name, s.text(t)); err != nil {
			t.Fatalf("docs/reference.md, section %s: %v", s.name, err)
		}
	}
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/reference.md is stale: run `make docs` (go test ./test/docs -run TestReference -update); the difference:\n%s",
		lineDiff(got, want))
}

// lineDiff lists the lines only one side has, a few of them.
func lineDiff(got, want string) string {
	have := map[string]int{}
	for _, l := range strings.Split(got, "\n") {
		have[l]++
	}
	var b strings.Builder
	n := 0
	for _, l := range strings.Split(want, "\n") {
		if have[l] > 0 {
			have[l]--
			continue
		}
		if n++; n <= 20 {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	var gone []string
	for l, c := range have {
		if c > 0 && l != "" {
			gone = append(gone, l)
		}
	}
	slices.Sort(gone)
	for _, l := range gone {
		if n++; n <= 40 {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	return b.String()
}

// cell makes s safe in a Markdown table cell.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}
