package prepull

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/inplace-dev/inplace/pkg/config"
)

// Each exit program is a static ELF executable of its architecture whose
// one loadable segment holds the entry point; the one of this machine's
// architecture runs and exits 0.
func TestExitProgram(t *testing.T) {
	for arch, m := range exitCode {
		t.Run(arch, func(t *testing.T) {
			b, ok := exitProgram(arch)
			if !ok {
				t.Fatal("no program")
			}
			f, err := elf.NewFile(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if f.Class != elf.ELFCLASS64 || f.Type != elf.ET_EXEC || f.Machine != m.machine || len(f.Progs) != 1 {
				t.Fatalf("class %v type %v machine %v, %d segments; want a 64-bit executable for %v, one segment",
					f.Class, f.Type, f.Machine, len(f.Progs), m.machine)
			}
			p := f.Progs[0]
			if p.Type != elf.PT_LOAD || p.Flags != elf.PF_R|elf.PF_X || p.Off != 0 || p.Filesz != uint64(len(b)) ||
				f.Entry < p.Vaddr || f.Entry+uint64(len(m.code)) != p.Vaddr+p.Filesz {
				t.Errorf("segment %+v, entry %#x; want the whole file loaded, read and execute, the code at its end", p.ProgHeader, f.Entry)
			}
			if arch != runtime.GOARCH || runtime.GOOS != "linux" {
				return
			}
			path := filepath.Join(t.TempDir(), "exit")
			if err := os.WriteFile(path, b, 0o555); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.CommandContext(t.Context(), path).CombinedOutput(); err != nil {
				t.Errorf("run: %v %q; want exit 0", err, out)
			}
		})
	}
	if _, ok := exitProgram("s390x"); ok {
		t.Error("exitProgram(s390x) is there; the tests cover amd64 and arm64")
	}
}

// ensureExit creates the ConfigMap the pre-pull pods mount when it is
// missing, leaves the right one alone, and refuses one of its name that
// holds something else (a pod would run it on every node).
func TestEnsureExit(t *testing.T) {
	const ns = "pulls"
	want := exitConfigMap(ns)
	other := want.DeepCopy()
	other.BinaryData["exit-amd64"] = []byte("#!/bin/sh\n")
	tests := []struct {
		name    string
		objs    []*corev1.ConfigMap
		wantErr bool
		creates int
	}{
		{"missing", nil, false, 1},
		{"there", []*corev1.ConfigMap{want.DeepCopy()}, false, 0},
		{"something else under its name", []*corev1.ConfigMap{other}, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset()
			for _, o := range tt.objs {
				if _, err := client.CoreV1().ConfigMaps(ns).Create(t.Context(), o, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			client.ClearActions()
			f := New(Deps{Client: client, Config: config.NewStore(config.StandardDefaults(), nil)})
			err := f.ensureExit(t.Context(), ns)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ensureExit = %v; want an error: %v", err, tt.wantErr)
			}
			creates := 0
			for _, a := range client.Actions() {
				if a.GetVerb() == "create" {
					creates++
				}
			}
			if creates != tt.creates {
				t.Errorf("%d creates; want %d", creates, tt.creates)
			}
			got, err := client.CoreV1().ConfigMaps(ns).Get(t.Context(), want.Name, metav1.GetOptions{})
			if err != nil || got.Immutable == nil || !*got.Immutable {
				t.Errorf("configmap %v (%v); want it there, immutable", got, err)
			}
		})
	}
}
