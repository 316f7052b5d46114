package docs

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// annotationPrefix starts every name inplace reads or writes on objects.
const annotationPrefix = "inplace.dev/"

// placement says what a name is and who sets it. Every inplace.dev/ name
// the code declares must have one here; the doc comment of its constant
// says what it means.
type placement struct {
	on    string // the object and the kind of name
	byYou bool   // set by the user (an opt-in), else by inplace
}

var placements = map[string]placement{
	"inplace.dev/policy":             {"workload or bare pod", true},
	"inplace.dev/max-unavailable":    {"workload or bare pod", true},
	"inplace.dev/grace-seconds":      {"workload or bare pod", true},
	"inplace.dev/prepull":            {"workload or bare pod", true},
	"inplace.dev/paused":             {"workload or bare pod", true},
	"inplace.dev/verify-seconds":     {"workload or bare pod", true},
	"inplace.dev/sync-under-gitops":  {"workload", true},
	"inplace.dev/poll-interval":      {"workload or bare pod", true},
	"inplace.dev/approval":           {"workload or bare pod", true},
	"inplace.dev/template-reference": {"workload", true},
	"inplace.dev/signature-key":      {"workload or bare pod", true},
	"inplace.dev/signature-identity": {"workload or bare pod", true},
	"inplace.dev/signature-issuer":   {"workload or bare pod", true},
	"inplace.dev/restart-on-change":  {"Deployment, StatefulSet, DaemonSet", true},
	"inplace.dev/analysis":           {"workload", true},
	"inplace.dev/ready":              {"pod: readiness gate condition type (you declare the gate in the template; inplace sets the condition)", true},
	"inplace.dev/state":              {"pod", false},
	"inplace.dev/restarted-at":       {"pod", false},
	"inplace.dev/restart-reason":     {"pod", false},
	"inplace.dev/template-sync":      {"workload, while a template sync runs", false},
	"inplace.dev/previous-images":    {"workload", false},
	"inplace.dev/prepull-images":     {"pre-pull pod: label and annotation", false},
	"inplace.dev/prepull-created":    {"pre-pull pod", false},
	"inplace.dev/prepull-for":        {"pre-pull pod: label", false},
	"inplace.dev/data-hash":          {"ConfigMap or Secret in compute-spec's cache only (never written to the API server)", false},
}

// declared is a string constant of the code: its name, package and doc.
type declared struct {
	name, pkg, doc string
}

// goFiles are the module's Go files that are not tests, outside test/.
func goFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() && (rel == "test" || rel == "bin" || strings.HasPrefix(d.Name(), ".")) && rel != "." {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// stringConsts are the string constants of the files, by value, and every
// string literal's text.
func stringConsts(t *testing.T, dir string, files []string) (map[string][]declared, []string) {
	t.Helper()
	consts := map[string][]declared{}
	var literals []string
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		pkg, _ := filepath.Rel(dir, filepath.Dir(path))
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					literals = append(literals, s)
				}
			}
			return true
		})
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, _ := strconv.Unquote(lit.Value)
					doc := vs.Doc
					if doc == nil && len(gen.Specs) == 1 {
						doc = gen.Doc
					}
					consts[v] = append(consts[v], declared{name: name.Name, pkg: filepath.ToSlash(pkg), doc: doc.Text()})
				}
			}
		}
	}
	return consts, literals
}

var reName = regexp.MustCompile(regexp.QuoteMeta(annotationPrefix) + `[a-z0-9.-]*[a-z0-9]`)

// annotationsSection is the tables of every inplace.dev/ name the code
// declares: what the user sets, and what inplace writes.
func annotationsSection(t *testing.T) string {
	dir := root(t)
	consts, literals := stringConsts(t, dir, goFiles(t, dir))
	names := map[string][]declared{}
	idents := map[string]string{}
	for v, ds := range consts {
		if strings.HasPrefix(v, annotationPrefix) {
			names[v] = ds
			for _, d := range ds {
				idents[d.name] = v
			}
		}
	}
	for _, l := range literals {
		for _, n := range reName.FindAllString(l, -1) {
			if _, ok := names[n]; !ok {
				t.Errorf("%q is used in a string but declared by no constant: declare it, with a doc comment saying what it means", n)
			}
		}
	}
	var mine, yours []string
	for n := range names {
		p, ok := placements[n]
		switch {
		case !ok:
			t.Errorf("%s (%s) is not in test/docs placements: say there where it goes and who sets it", n, names[n][0].pkg)
		case p.byYou:
			yours = append(yours, n)
		default:
			mine = append(mine, n)
		}
	}
	for n := range placements {
		if _, ok := names[n]; !ok {
			t.Errorf("test/docs placements names %s, which the code no longer declares", n)
		}
	}
	slices.Sort(mine)
	slices.Sort(yours)
	var b strings.Builder
	b.WriteString("Set by you:\n\n| name | on | what it does |\n|---|---|---|\n")
	for _, n := range yours {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", n, cell(placements[n].on), cell(describe(t, n, names[n], idents)))
	}
	b.WriteString("\nWritten by inplace (read them, do not set them):\n\n| name | on | what it holds |\n|---|---|---|\n")
	for _, n := range mine {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", n, cell(placements[n].on), cell(describe(t, n, names[n], idents)))
	}
	return b.String()
}

// describe is the doc comment of the constants declaring name, without
// their own identifier, other such identifiers replaced by their values.
func describe(t *testing.T, name string, ds []declared, idents map[string]string) string {
	t.Helper()
	for _, d := range ds {
		if d.doc == "" {
			continue
		}
		return sentence(d.doc, d.name, idents)
	}
	t.Errorf("%s: no constant declaring it has a doc comment (%s.%s): write one saying what it means", name, ds[0].pkg, ds[0].name)
	return ""
}

// sentence turns "Name is the x." or "Name: the x." into "The x.", with
// identifiers of idents written as their values.
func sentence(doc, name string, idents map[string]string) string {
	s := strings.Join(strings.Fields(doc), " ")
	s = strings.TrimPrefix(s, name)
	s = strings.TrimPrefix(s, ":")
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "is ")
	for id, v := range idents {
		s = regexp.MustCompile(`\b`+id+`\b`).ReplaceAllString(s, "`"+v+"`")
	}
	if s != "" {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}
