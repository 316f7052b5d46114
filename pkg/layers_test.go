package pkg_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/inplace-dev/inplace"

// below is what each layer may import of this module (besides itself):
// arrows point down, from the composition (cmd, the root package) through
// the functions and the tools, and the rollout controller the functions
// begin rollouts on, to the adapters, the pure core and the events
// contract. A function may import its own sub-packages, never another
// function.
var below = map[string][]string{
	"events":     {}, // but pkg/core/settle, the error classes
	"core":       {"events"},
	"bus":        {"core", "events"},
	"kube":       {"core", "events"},
	"inputs":     {"core", "events", "kube"},
	"config":     {"core", "events", "bus", "inputs"},
	"controller": {"core", "events", "bus", "kube", "config"},
	"function":   {"core", "events", "bus", "kube", "inputs", "config", "controller"},
	"tools":      {"core", "events", "bus", "kube", "inputs", "config"},
	"root":       {"core", "events", "bus", "kube", "inputs", "config", "controller", "function", "cmd"},
	"cmd":        {"core", "events", "bus", "kube", "inputs", "config", "controller", "function", "tools", "root"},
	"test":       {"core", "events", "bus", "kube", "inputs", "config", "controller", "function", "tools", "root", "cmd", "helper"},
	"helper":     {"core", "events", "bus", "kube", "inputs", "config", "controller", "function", "tools", "test", "helper"},
}

// narrower are packages held to fewer layers than their folder's: the
// fleet's promotion controller runs on the hub, which has no API server of
// its own to act on, so it reaches no kube or config.
var narrower = map[string][]string{
	module + "/pkg/controller/fleet": {"core", "events", "bus"},
}

// outside is what the pure layers must not import from outside the module:
// no client of the API server, no NATS.
var outside = map[string][]string{
	"events": {"k8s.io/client-go/", "github.com/nats-io/"},
	"core":   {"k8s.io/client-go/", "github.com/nats-io/"},
}

// layer names the layer of a package of this module by its folder. A
// package whose name ends in "test" outside test/ (bustest, fntest, …) is a
// test helper: only tests, test/ and other helpers may import it.
func layer(path string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
	first, rest, _ := strings.Cut(rel, "/")
	last := rel[strings.LastIndex(rel, "/")+1:]
	switch {
	case rel == "":
		return "root"
	case first == "test", rel == "pkg": // pkg holds only this test

		return "test"
	case strings.HasSuffix(last, "test") && last != "test":
		return "helper"
	case first == "pkg":
		second, _, _ := strings.Cut(rest, "/")
		return second
	case first == "functions":
		return "function"
	}
	return first // events, cmd, or a folder the rules do not know
}

type pkg struct {
	ImportPath string
	Imports    []string
}

// TestLayers fails naming every import of a non-test file that points the
// wrong way between the layers of docs/architecture.md.
func TestLayers(t *testing.T) {
	for _, p := range list(t) {
		from := layer(p.ImportPath)
		if _, ok := below[from]; !ok {
			t.Errorf("%s: folder %q is in no layer; add it to pkg/layers_test.go and docs/architecture.md",
				p.ImportPath, from)
			continue
		}
		for _, imp := range p.Imports {
			if err := allowed(p.ImportPath, from, imp); err != nil {
				t.Errorf("%s imports %s: %v", p.ImportPath, imp, err)
			}
		}
	}
}

func allowed(path, from, imp string) error {
	if !strings.HasPrefix(imp, module) {
		for _, bad := range outside[from] {
			if strings.HasPrefix(imp, bad) {
				return fmt.Errorf("the %s layer must not import %s", from, bad)
			}
		}
		return nil
	}
	to := layer(imp)
	if only, ok := narrower[path]; ok && to != from && !slices.Contains(only, to) {
		return fmt.Errorf("%s may import only the %v layers, not the %s layer", path, only, to)
	}
	switch {
	case from == "events" && imp == module+"/pkg/core/settle":
		return nil
	case from == "function" && to == "function":
		if own(path) == own(imp) {
			return nil
		}
		return errors.New("functions never import each other; they meet only through events")
	case from == to, slices.Contains(below[from], to):
		return nil
	}
	return fmt.Errorf("the %s layer must not import the %s layer", from, to)
}

// own is the function a package of functions/ belongs to.
func own(path string) string {
	parts := strings.SplitN(strings.TrimPrefix(path, module+"/"), "/", 3)
	return parts[0] + "/" + parts[1]
}

func list(t *testing.T) []pkg {
	t.Helper()
	watch(t)
	cmd := exec.CommandContext(t.Context(), "go", "list", "-e", "-json=ImportPath,Imports", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list: decode: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 40 {
		t.Fatalf("go list found %d packages; want the whole module", len(pkgs))
	}
	return pkgs
}

// watch reads the module's folders and stats its Go files, so that go
// test's cache, which records what a test reads but not what the go list it
// runs reads, reruns this test when an import changes.
func watch(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == ".git" || d.Name() == "bin" || d.Name() == "testdata"):
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(path, ".go"):
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatalf("read the module: %v", err)
	}
}
