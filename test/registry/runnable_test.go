package registry

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/inplace-dev/inplace/test/eventually"
	"github.com/inplace-dev/inplace/test/images"
)

// startRunnable starts a runnable registry for the test.
func startRunnable(t *testing.T) *Registry {
	t.Helper()
	r, err := Start(t.Context(), Options{Logger: testLogger(t), Runnable: true})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// pull fetches the linux/amd64 image ref names, as a node pulls it.
func pull(t *testing.T, ref string) v1.Image {
	t.Helper()
	parsed, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(parsed, remote.WithContext(t.Context()), remote.WithPlatform(defaultPlatform))
	if err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}
	return img
}

// TestRunnablePush: on a runnable registry the pushes tests make today
// become program images: the app (or sidecar) with the tag as version,
// the crash switch for WithCrash, WithEnv after, the size as padding.
func TestRunnablePush(t *testing.T) {
	r := startRunnable(t)
	tests := []struct {
		name, repo, tag string
		opts            []PushOption
		entrypoint      string
		env             []string
		crash           bool
		padding         []int64 // sizes of the layers after the program's
		mediaType       types.MediaType
	}{
		{name: "app", repo: "team/web", tag: "1.0.1", entrypoint: "/app",
			env: []string{"PATH=/", "APP_VERSION=1.0.1"}, padding: []int64{images.DefaultPadding}, mediaType: types.DockerManifestSchema2},
		{name: "crash", repo: "team/api", tag: "2.0.0", opts: []PushOption{WithCrash()}, entrypoint: "/app",
			env: []string{"PATH=/", "APP_VERSION=2.0.0", "APP_CRASH=true"}, crash: true, padding: []int64{images.DefaultPadding}, mediaType: types.DockerManifestSchema2},
		{name: "sized oci with env", repo: "team/db", tag: "v3", opts: []PushOption{WithSizeMB(1), WithLayers(2), WithOCI(), WithEnv("APP_ERROR_RATE=0.1")},
			entrypoint: "/app", env: []string{"PATH=/", "APP_VERSION=v3", "APP_ERROR_RATE=0.1"}, padding: []int64{512 << 10, 512 << 10}, mediaType: types.OCIManifestSchema1},
		{name: "sidecar", repo: "team/side", tag: "1.0.0", entrypoint: "/sidecar",
			env: []string{"PATH=/", "SIDECAR_VERSION=1.0.0"}, padding: []int64{images.DefaultPadding}, mediaType: types.DockerManifestSchema2},
		{name: "init", repo: "team/setup", tag: "1", opts: []PushOption{WithProgram(images.InitProgram), WithSize(1 << 10)}, entrypoint: "/init",
			env: []string{"PATH=/"}, padding: []int64{1 << 10}, mediaType: types.DockerManifestSchema2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			digest, err := r.Push(t.Context(), tt.repo, tt.tag, tt.opts...)
			if err != nil {
				t.Fatalf("Push: %v", err)
			}
			ref := r.Host() + "/" + tt.repo + ":" + tt.tag
			img := pull(t, ref)
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			got := struct {
				Entrypoint []string
				Env        []string
				Platform   string
			}{cf.Config.Entrypoint, cf.Config.Env, cf.OS + "/" + cf.Architecture}
			want := struct {
				Entrypoint []string
				Env        []string
				Platform   string
			}{[]string{tt.entrypoint}, tt.env, "linux/amd64"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			checkLayers(t, img, tt.mediaType, tt.padding)
			res, err := r.Resolve(t.Context(), ref)
			if err != nil || res.Digest != digest || res.Crash != tt.crash || !slices.Equal(res.Programs, []string{tt.entrypoint}) {
				t.Errorf("Resolve = %+v, %v; want digest %s, crash %v, programs [%s]", res, err, digest, tt.crash, tt.entrypoint)
			}
		})
	}
}

// checkLayers: img is the program's layer then padding layers of the
// given sizes, all of media type mt's kind.
func checkLayers(t *testing.T, img v1.Image, mt types.MediaType, padding []int64) {
	t.Helper()
	if got, _ := img.MediaType(); got != mt {
		t.Errorf("media type %s, want %s", got, mt)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Layers) != 1+len(padding) {
		t.Fatalf("%d layers, want the program and %d padding", len(m.Layers), len(padding))
	}
	for i, want := range padding {
		if got := m.Layers[1+i].Size; got < want || got > want+16<<10 {
			t.Errorf("padding layer %d: %d bytes, want about %d", i, got, want)
		}
	}
}

// TestRunnableDistinctDigests: pushing the same tag twice makes two
// images, different in padding, sharing the program layer.
func TestRunnableDistinctDigests(t *testing.T) {
	r := startRunnable(t)
	var digests []string
	var layers [][]v1.Descriptor
	for range 2 {
		d, err := r.Push(t.Context(), "team/web", "1.0.0")
		if err != nil {
			t.Fatal(err)
		}
		m, err := pull(t, r.Host()+"/team/web@"+d).Manifest()
		if err != nil {
			t.Fatal(err)
		}
		digests, layers = append(digests, d), append(layers, m.Layers)
	}
	if digests[0] == digests[1] || layers[0][1].Digest == layers[1][1].Digest || layers[0][0].Digest != layers[1][0].Digest {
		t.Errorf("digests %v, layers %v and %v: want new digests and padding, the same program layer", digests, layers[0], layers[1])
	}
}

// TestRunnableIndex: a multi-platform push is an index whose linux/amd64
// image runs the app; the other platforms keep random layers.
func TestRunnableIndex(t *testing.T) {
	r := startRunnable(t)
	if _, err := r.Push(t.Context(), "team/multi", "1.1.0", WithPlatforms("linux/arm64/v8", "linux/amd64")); err != nil {
		t.Fatal(err)
	}
	ref := r.Host() + "/team/multi:1.1.0"
	cf, err := pull(t, ref).ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.Entrypoint[0] != "/app" || cf.Config.Labels[images.ProgramLabel] != "app" {
		t.Errorf("linux/amd64 config %+v, want the app", cf.Config)
	}
	parsed, _ := name.ParseReference(ref)
	arm, err := remote.Image(parsed, remote.WithContext(t.Context()), remote.WithPlatform(v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}))
	if err != nil {
		t.Fatal(err)
	}
	if acf, err := arm.ConfigFile(); err != nil || len(acf.Config.Entrypoint) != 0 {
		t.Errorf("linux/arm64 config %+v, %v: want random layers, no entrypoint", acf, err)
	}
}

// TestRunnableRuns: the pushed app, pulled back and started as its config
// says, answers its tag.
func TestRunnableRuns(t *testing.T) {
	r := startRunnable(t)
	if _, err := r.Push(t.Context(), "team/web", "4.2.0"); err != nil {
		t.Fatal(err)
	}
	img := pull(t, r.Host()+"/team/web:4.2.0")
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	bin := extract(t, img, strings.TrimPrefix(cf.Config.Entrypoint[0], "/"))
	cmd := exec.CommandContext(t.Context(), bin)
	cmd.Env = append(cf.Config.Env, "APP_LISTEN=127.0.0.1:0") // the pod's env after the image's
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	addr := regexp.MustCompile(`msg=listening addr=(\S+)`)
	var m []string
	err = eventually.Poll(t.Context(), 30*time.Second, "the app's address logged", func(context.Context) (bool, error) {
		m = addr.FindStringSubmatch(stderr.String())
		return m != nil, nil
	})
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	resp, err := http.Get("http://" + m[1] + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "4.2.0\n" {
		t.Errorf("GET / = %q, want the tag 4.2.0", body)
	}
}

// extract writes the file named file from img's layers to a temporary
// directory and returns its path.
func extract(t *testing.T, img v1.Image, file string) string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			hdr, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if hdr.Name != file {
				continue
			}
			path := filepath.Join(t.TempDir(), file)
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o755); err != nil {
				t.Fatal(err)
			}
			_ = rc.Close()
			return path
		}
		_ = rc.Close()
	}
	t.Fatalf("no %s in the image", file)
	return ""
}

// syncBuffer is a bytes.Buffer safe to write from a process and read
// from the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
