package image_test

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/inplace-dev/inplace/cmd/inplace-image/image"
	"github.com/inplace-dev/inplace/test/registry"
)

const moduleRoot = "../../.."

// TestBuildPushesRunnableMultiArchImages builds both images for
// linux/amd64 and linux/arm64 into the in-process registry, then reads
// them back as a node would: an OCI index of both platforms, each image
// running its program as nonroot from the entrypoint, on a base with
// passwd, /tmp and CA certificates; the binary for this machine, taken out
// of its layer, runs and says its version.
func TestBuildPushesRunnableMultiArchImages(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles inplace and nats-server for two platforms")
	}
	ctx := t.Context()
	reg, err := registry.Start(ctx, registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	natsVersion, err := image.ModuleVersion(ctx, "go", moduleRoot, image.NATSModule)
	if err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	start := time.Now()
	rs, err := image.Build(ctx, image.Options{Registry: reg.Host() + "/inplace",
		Programs: []image.Program{image.Inplace("v0.0.0-test"), image.NATSServer(natsVersion)},
		Dir:      moduleRoot, Revision: "0123456789abcdef", Created: created})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("built and pushed in %s", time.Since(start).Round(time.Second))
	if len(rs) != 2 {
		t.Fatalf("got %d images, want 2", len(rs))
	}
	for _, tc := range []struct {
		r       image.Result
		args    []string
		version string
	}{
		{rs[0], []string{"version"}, "inplace v0.0.0-test"},
		{rs[1], []string{"--version"}, "nats-server: " + natsVersion},
	} {
		t.Run(tc.r.Program.Name, func(t *testing.T) {
			t.Logf("%s: %v, compressed %v bytes", tc.r.Digest, tc.r.Platforms, tc.r.Sizes)
			imgs := checkIndex(t, tc.r)
			for p, img := range imgs {
				checkConfig(t, img, p, tc.r.Program, created)
				checkBase(t, img)
			}
			host := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
			img, ok := imgs[host.String()]
			if !ok {
				t.Skipf("no image for this machine's platform %s", host)
			}
			out := runFromImage(t, img, tc.r.Program.Path, tc.args...)
			if !strings.Contains(out, tc.version) {
				t.Errorf("%s %v says %q, want %q in it", tc.r.Program.Path, tc.args, out, tc.version)
			}
		})
	}
}

// checkIndex reads the index the tag names and its images, by platform.
func checkIndex(t *testing.T, r image.Result) map[string]v1.Image {
	t.Helper()
	idx, err := remote.Index(r.Tag, remote.WithContext(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := idx.Digest()
	if d.String() != r.Digest.DigestStr() {
		t.Errorf("the tag names %s, the build pushed %s", d, r.Digest.DigestStr())
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIImageIndex {
		t.Errorf("index media type %s, want %s", m.MediaType, types.OCIImageIndex)
	}
	imgs := map[string]v1.Image{}
	var got []string
	for _, desc := range m.Manifests {
		got = append(got, desc.Platform.String())
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		imgs[desc.Platform.String()] = img
	}
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64"}, got); diff != "" {
		t.Errorf("platforms (-want +got):\n%s", diff)
	}
	return imgs
}

func checkConfig(t *testing.T, img v1.Image, platform string, prog image.Program, created time.Time) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{"platform": cf.Platform().String(), "entrypoint": cf.Config.Entrypoint, "user": cf.Config.User,
		"created": cf.Created.UTC(), "revision": cf.Config.Labels[image.LabelRevision], "version": cf.Config.Labels[image.LabelVersion]}
	want := map[string]any{"platform": platform, "entrypoint": []string{prog.Path}, "user": "65532:65532",
		"created": created, "revision": "0123456789abcdef", "version": prog.Tag}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s config (-want +got):\n%s", platform, diff)
	}
}

// checkBase looks at the files of the image's base layer.
func checkBase(t *testing.T, img v1.Image) {
	t.Helper()
	files := filesOf(t, img, 0)
	if !strings.Contains(string(files["etc/passwd"].data), "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nonroot user 65532:\n%s", files["etc/passwd"].data)
	}
	if !strings.Contains(string(files["etc/group"].data), "nonroot:x:65532:") {
		t.Errorf("/etc/group has no nonroot group 65532")
	}
	if h := files["tmp/"].header; h == nil || h.Typeflag != tar.TypeDir || h.Mode != 0o1777 {
		t.Errorf("/tmp is %+v, want a directory of mode 1777", h)
	}
	if !strings.Contains(string(files["etc/ssl/certs/ca-certificates.crt"].data), "BEGIN CERTIFICATE") {
		t.Errorf("/etc/ssl/certs/ca-certificates.crt holds no certificate")
	}
}

type file struct {
	header *tar.Header
	data   []byte
}

// filesOf are the files of the image's layer i, by name.
func filesOf(t *testing.T, img v1.Image, i int) map[string]file {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := layers[i].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	out := map[string]file{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = file{header: h, data: b}
	}
}

// runFromImage takes the binary at path out of the image's last layer and
// runs it with args.
func runFromImage(t *testing.T, img v1.Image, path string, args ...string) string {
	t.Helper()
	layers, _ := img.Layers()
	f, ok := filesOf(t, img, len(layers)-1)[strings.TrimPrefix(path, "/")]
	if !ok {
		t.Fatalf("%s is not in the image's last layer", path)
	}
	if f.header.Mode&0o111 == 0 {
		t.Errorf("%s has mode %o: not executable", path, f.header.Mode)
	}
	bin := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(bin, f.data, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", path, args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestOptionsAreChecked: a build without a registry, for a platform Go
// does not build, or of a program without a tag fails before building,
// naming what to fix.
func TestOptionsAreChecked(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    image.Options
		want string
	}{
		{"no registry", image.Options{Programs: []image.Program{image.Inplace("v1")}}, "REGISTRY: name the registry"},
		{"bad registry", image.Options{Registry: "Bad Host/x", Programs: []image.Program{image.Inplace("v1")}}, `REGISTRY "Bad Host/x"`},
		{"no tag", image.Options{Registry: "127.0.0.1:1/x", Programs: []image.Program{image.Inplace("")}}, "image inplace: no tag"},
		{"windows", image.Options{Registry: "127.0.0.1:1/x", Programs: []image.Program{image.Inplace("v1")},
			Platforms: []v1.Platform{{OS: "windows", Architecture: "amd64"}}}, "PLATFORMS: platform windows/amd64: only linux"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := image.Build(t.Context(), tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Build: %v, want an error with %q", err, tc.want)
			}
		})
	}
	if _, err := image.ParsePlatforms("linux/amd64,linux/mips"); err == nil || !strings.Contains(err.Error(), "linux/mips") {
		t.Errorf("ParsePlatforms(linux/mips): %v, want an error naming it", err)
	}
}

// TestNATSImageIsTheManifests: the nats-server built is the version
// config/nats runs, so the image make image pushes can stand in for it.
func TestNATSImageIsTheManifests(t *testing.T) {
	v, err := image.ModuleVersion(t.Context(), "go", moduleRoot, image.NATSModule)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(moduleRoot, "config", "nats", "nats.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := "image: nats:" + strings.TrimPrefix(v, "v") + "-alpine"
	if !strings.Contains(string(b), want) {
		t.Errorf("config/nats/nats.yaml does not run %q, the nats-server go.mod requires (%s): keep them in step", want, v)
	}
}
