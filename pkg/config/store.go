package config

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"knative.dev/pkg/configmap/informer"
)

// Store holds the current Defaults; readers always see a whole, valid value.
type Store struct {
	v   atomic.Pointer[Defaults]
	log *slog.Logger
}

// NewStore starts with d.
func NewStore(d Defaults, log *slog.Logger) *Store {
	s := &Store{log: log}
	s.v.Store(&d)
	return s
}

// Load returns the current Defaults.
func (s *Store) Load() Defaults { return *s.v.Load() }

// OnConfigMap applies a new version of the ConfigMap. An invalid one is
// logged and ignored: the last good Defaults stay in force.
func (s *Store) OnConfigMap(cm *corev1.ConfigMap) {
	d, err := ParseDefaults(cm.Data)
	if err != nil {
		s.log.Error("ignoring invalid configuration; keeping the previous one", "err", err)
		return
	}
	s.v.Store(&d)
	s.log.Info("configuration updated", "configmap", cm.Name, "resourceVersion", cm.ResourceVersion)
}

// Watch follows the config-inplace ConfigMap in namespace until ctx ends.
// A missing ConfigMap means StandardDefaults.
func (s *Store) Watch(ctx context.Context, kc kubernetes.Interface, namespace string) error {
	w := informer.NewInformedWatcher(kc, namespace)
	w.WatchWithDefault(corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Namespace: namespace},
	}, s.OnConfigMap)
	if err := w.Start(ctx.Done()); err != nil {
		return fmt.Errorf("watch configmap %s/%s: %w", namespace, ConfigMapName, err)
	}
	return nil
}
