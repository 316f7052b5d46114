package reconfig

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestWants(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	spec := &corev1.PodSpec{
		Volumes: []corev1.Volume{
			{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "web-conf"}}}},
			{Name: "all", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "tls"}}}}}}},
		},
		InitContainers: []corev1.Container{{Name: "proxy", RestartPolicy: &always, VolumeMounts: []corev1.VolumeMount{{Name: "all"}}}},
		Containers: []corev1.Container{
			{Name: "app", VolumeMounts: []corev1.VolumeMount{{Name: "conf"}}, Env: []corev1.EnvVar{{Name: "PW",
				ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}}}}}},
			{Name: "side", EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-conf"}}}}},
		},
	}
	tests := []struct {
		name, ann string
		obj       Object
		want      []string
		ok        bool
	}{
		{"referenced configmap", "referenced", Object{ConfigMap, "web-conf"}, []string{"app", "side"}, true},
		{"referenced secret env", "referenced", Object{Secret, "db"}, []string{"app"}, true},
		{"referenced projected secret", "referenced", Object{Secret, "tls"}, []string{"proxy"}, true},
		{"referenced: not used", "referenced", Object{ConfigMap, "other"}, nil, false},
		{"named and used", "configmap/web-conf", Object{ConfigMap, "web-conf"}, []string{"app", "side"}, true},
		{"named, not used visibly: all", "secret/api-token", Object{Secret, "api-token"}, []string{"proxy", "app", "side"}, true},
		{"not named", "configmap/web-conf", Object{Secret, "db"}, nil, false},
		{"a configmap is not a secret of that name", "secret/web-conf", Object{ConfigMap, "web-conf"}, nil, false},
		{"bad annotation", "web-conf", Object{ConfigMap, "web-conf"}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Wants(tt.ann, spec, tt.obj)
			if ok != tt.ok {
				t.Fatalf("ok = %v; want %v", ok, tt.ok)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("containers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParse(t *testing.T) {
	objs, ref, err := Parse(" configmap/a, Secret/b ,referenced")
	if err != nil || !ref || len(objs) != 2 || objs[1] != (Object{Secret, "b"}) {
		t.Errorf("Parse = %v %v %v", objs, ref, err)
	}
	for _, bad := range []string{"", "pod/x", "configmap/", "a"} {
		if _, _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
}
