package reconfig

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Annotation opts a workload in to restarts in place when a ConfigMap or
// Secret it uses changes: "referenced" (every one its pod template uses)
// or a list, "configmap/web-conf,secret/db-password". The workload must
// opt in with inplace.dev/policy too.
const Annotation = "inplace.dev/restart-on-change"

// Referenced is the annotation value meaning every ConfigMap and Secret the
// pod template references.
const Referenced = "referenced"

// Kinds of object watched.
const (
	ConfigMap = "configmap"
	Secret    = "secret"
)

// Object names a ConfigMap or Secret in the workload's namespace.
type Object struct{ Kind, Name string }

func (o Object) String() string { return o.Kind + "/" + o.Name }

// Parse reads the annotation: the objects it names, or referenced.
func Parse(v string) (objs []Object, referenced bool, err error) {
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if item == Referenced {
			referenced = true
			continue
		}
		kind, name, ok := strings.Cut(item, "/")
		kind = strings.ToLower(kind)
		if !ok || name == "" || (kind != ConfigMap && kind != Secret) {
			return nil, false, fmt.Errorf("%s: %q is not configmap/NAME, secret/NAME or %s", Annotation, item, Referenced)
		}
		objs = append(objs, Object{Kind: kind, Name: name})
	}
	if len(objs) == 0 && !referenced {
		return nil, false, fmt.Errorf("%s: names nothing", Annotation)
	}
	return objs, referenced, nil
}

// Wants reports whether a workload annotated v with pod template spec
// restarts on a change of o, and which containers: those that use o (env,
// envFrom, a mounted volume of it); every container when the annotation
// names o and none uses it visibly (it may read it through the API).
func Wants(v string, spec *corev1.PodSpec, o Object) ([]string, bool) {
	objs, referenced, err := Parse(v)
	if err != nil {
		return nil, false
	}
	users := Users(spec, o)
	switch {
	case slices.Contains(objs, o) && len(users) == 0:
		return containerNames(spec), true
	case slices.Contains(objs, o), referenced && len(users) > 0:
		return users, true
	}
	return nil, false
}

// Users are the containers (and native sidecars) of spec that use o.
func Users(spec *corev1.PodSpec, o Object) []string {
	vols := map[string]bool{}
	for _, v := range spec.Volumes {
		if volumeUses(v, o) {
			vols[v.Name] = true
		}
	}
	var out []string
	for _, c := range allContainers(spec) {
		if containerUses(c, o, vols) {
			out = append(out, c.Name)
		}
	}
	return out
}

func allContainers(spec *corev1.PodSpec) []corev1.Container {
	var out []corev1.Container
	for _, c := range spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			out = append(out, c)
		}
	}
	return append(out, spec.Containers...)
}

func containerNames(spec *corev1.PodSpec) []string {
	var out []string
	for _, c := range allContainers(spec) {
		out = append(out, c.Name)
	}
	return out
}

func containerUses(c corev1.Container, o Object, vols map[string]bool) bool {
	for _, m := range c.VolumeMounts {
		if vols[m.Name] {
			return true
		}
	}
	for _, e := range c.EnvFrom {
		if o.Kind == ConfigMap && e.ConfigMapRef != nil && e.ConfigMapRef.Name == o.Name ||
			o.Kind == Secret && e.SecretRef != nil && e.SecretRef.Name == o.Name {
			return true
		}
	}
	for _, e := range c.Env {
		f := e.ValueFrom
		if f == nil {
			continue
		}
		if o.Kind == ConfigMap && f.ConfigMapKeyRef != nil && f.ConfigMapKeyRef.Name == o.Name ||
			o.Kind == Secret && f.SecretKeyRef != nil && f.SecretKeyRef.Name == o.Name {
			return true
		}
	}
	return false
}

func volumeUses(v corev1.Volume, o Object) bool {
	switch {
	case o.Kind == ConfigMap && v.ConfigMap != nil:
		return v.ConfigMap.Name == o.Name
	case o.Kind == Secret && v.Secret != nil:
		return v.Secret.SecretName == o.Name
	case v.Projected != nil:
		for _, s := range v.Projected.Sources {
			if o.Kind == ConfigMap && s.ConfigMap != nil && s.ConfigMap.Name == o.Name ||
				o.Kind == Secret && s.Secret != nil && s.Secret.Name == o.Name {
				return true
			}
		}
	}
	return false
}
