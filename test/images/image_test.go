package images

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// TestPauseImage: the pause image is one layer holding a static
// linux/amd64 ELF at /pause, its entrypoint, with Docker media types.
func TestPauseImage(t *testing.T) {
	img, err := Pause(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	checkConfig(t, cf, PauseProgram, []string{"PATH=/"})
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	if mt, _ := img.MediaType(); mt != types.DockerManifestSchema2 {
		t.Errorf("media type %s, want %s", mt, types.DockerManifestSchema2)
	}
	files := layerFiles(t, layers[0])
	if got := fileNames(files); !cmp.Equal(got, []string{"pause"}) {
		t.Fatalf("layer holds %v, want [pause]", got)
	}
	checkStaticELF(t, files["pause"])
}

// TestImageOptions: env and labels land in the config, padding in layers of
// the asked size, and the same seed gives the same digest, another seed
// another.
func TestImageOptions(t *testing.T) {
	o := Options{Env: []string{"A=1"}, Labels: map[string]string{"l": "v"}, Padding: 1 << 20, Layers: 2, Seed: "x", OCI: true}
	img, err := Image(t.Context(), PauseProgram, o)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	checkConfig(t, cf, PauseProgram, []string{"PATH=/", "A=1"})
	if cf.Config.Labels["l"] != "v" {
		t.Errorf("labels %v, want l=v", cf.Config.Labels)
	}
	if mt, _ := img.MediaType(); mt != types.OCIManifestSchema1 {
		t.Errorf("media type %s, want %s", mt, types.OCIManifestSchema1)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Layers) != 3 {
		t.Fatalf("%d layers, want the program and 2 padding", len(m.Layers))
	}
	for _, l := range m.Layers[1:] {
		if l.MediaType != types.OCILayer || l.Size < 512<<10 || l.Size > 512<<10+4<<10 {
			t.Errorf("padding layer %s of %d bytes, want an OCI layer of about 512 KiB", l.MediaType, l.Size)
		}
	}
	same, err := Image(t.Context(), PauseProgram, o)
	if err != nil {
		t.Fatal(err)
	}
	o.Seed = "y"
	other, err := Image(t.Context(), PauseProgram, o)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img.Digest()
	d2, _ := same.Digest()
	d3, _ := other.Digest()
	if d1 != d2 || d1 == d3 {
		t.Errorf("digests seed x %s, again %s, seed y %s: want the first two equal, the third different", d1, d2, d3)
	}
}

func checkConfig(t *testing.T, cf *v1.ConfigFile, p Program, env []string) {
	t.Helper()
	if got := (v1.Platform{OS: cf.OS, Architecture: cf.Architecture}); got.String() != "linux/amd64" {
		t.Errorf("platform %s, want linux/amd64", got)
	}
	if diff := cmp.Diff([]string{"/" + string(p)}, cf.Config.Entrypoint); diff != "" {
		t.Errorf("entrypoint (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(env, cf.Config.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if cf.Config.Labels[ProgramLabel] != string(p) || len(cf.Config.Labels[SourcesLabel]) != 64 {
		t.Errorf("labels %v, want %s=%s and a sources hash", cf.Config.Labels, ProgramLabel, p)
	}
}

// layerFiles reads the regular files of a layer, by name.
func layerFiles(t *testing.T, l v1.Layer) map[string][]byte {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Mode&0o111 == 0 && !strings.HasPrefix(hdr.Name, "padding") {
			t.Errorf("%s has mode %o, want executable", hdr.Name, hdr.Mode)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name] = b
	}
}

func fileNames(files map[string][]byte) []string {
	var names []string
	for n := range files {
		names = append(names, n)
	}
	return names
}

// checkStaticELF: b is an amd64 executable with no interpreter (static).
func checkStaticELF(t *testing.T, b []byte) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not an ELF file: %v", err)
	}
	if f.Machine != elf.EM_X86_64 || f.Type != elf.ET_EXEC {
		t.Errorf("ELF machine %s type %s, want EM_X86_64 ET_EXEC", f.Machine, f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("ELF has an interpreter: not static")
		}
	}
}
