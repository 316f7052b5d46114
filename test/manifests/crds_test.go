package manifests_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/inplace-dev/inplace/test/world"
)

var (
	crdsOnce sync.Once
	crdsErr  error
	crdNames []string
)

// installCRDs installs Knative Serving's and Eventing's CRDs (from their
// modules at the versions go.mod pins) and the NatsJetStreamChannel CRD
// into the world's API server, once per test binary, and waits until they
// are served.
func installCRDs(t *testing.T, w *world.World) {
	t.Helper()
	files := crdFiles(t)
	crdsOnce.Do(func() { crdNames, crdsErr = install(context.Background(), w, files) })
	if crdsErr != nil {
		t.Fatal(crdsErr)
	}
}

func crdFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, g := range []string{
		filepath.Join(moduleDir(t, "knative.dev/serving"), "config", "core", "300-resources", "*.yaml"),
		filepath.Join(moduleDir(t, "knative.dev/eventing"), "config", "core", "resources", "*.yaml"),
		filepath.Join("testdata", "natsjetstreamchannel-crd.yaml"),
	} {
		m, err := filepath.Glob(g)
		if err != nil || len(m) == 0 {
			t.Fatalf("no CRD files at %s", g)
		}
		files = append(files, m...)
	}
	return files
}

func install(ctx context.Context, w *world.World, files []string) ([]string, error) {
	c, err := apiextensions.NewForConfig(w.RestConfig())
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range files {
		crds, err := readCRDs(f)
		if err != nil {
			return nil, err
		}
		for _, crd := range crds {
			_, err := c.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return nil, fmt.Errorf("install CRD %s from %s: %w", crd.Name, f, err)
			}
			names = append(names, crd.Name)
		}
	}
	for _, name := range names {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			crd, err := c.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return nil, fmt.Errorf("CRD %s not established: %w", name, err)
		}
	}
	return names, nil
}

// readCRDs reads every CustomResourceDefinition document of a YAML file.
func readCRDs(path string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	var out []*apiextensionsv1.CustomResourceDefinition
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		var probe metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &probe); err != nil || probe.Kind != "CustomResourceDefinition" {
			continue
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(doc, &crd); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, &crd)
	}
}
