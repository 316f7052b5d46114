package config

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inplace-dev/inplace/test/world"
)

func TestMain(m *testing.M) { world.Main(m, world.Options{}) }

// The defaults follow the ConfigMap on a real API server without a restart,
// start as the standard ones while it is absent, and keep the last good
// value through an invalid edit.
func TestWatchFollowsTheConfigMap(t *testing.T) {
	w := world.Shared(t)
	ns := w.NewNamespace(t)
	ctx := t.Context()
	logged := &messages{}
	s := NewStore(StandardDefaults(), slog.New(logged))
	if err := s.Watch(ctx, w.Client(), ns); err != nil {
		t.Fatal(err)
	}
	if got := s.Load(); got.Policy.GraceSeconds != 0 {
		t.Fatalf("without the ConfigMap: %+v", got)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Namespace: ns},
		Data: map[string]string{"grace-seconds": "9", "max-unavailable": "25%"}}
	if _, err := w.Client().CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	world.Until(t, 30*time.Second, "grace 9", func() bool { return s.Load().Policy.GraceSeconds == 9 })
	if got := s.Load().Policy.MaxUnavailable; got.String() != "25%" {
		t.Errorf("max-unavailable = %s", got.String())
	}
	cm.Data["grace-seconds"] = "not a number"
	if _, err := w.Client().CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The store decided on the invalid edit once it logged that it ignores it.
	world.Until(t, 30*time.Second, "the invalid edit ignored", func() bool { return logged.has("ignoring invalid configuration") })
	if got := s.Load().Policy.GraceSeconds; got != 9 {
		t.Errorf("an invalid edit replaced the good configuration: grace %d", got)
	}
	cm2, err := w.Client().CoreV1().ConfigMaps(ns).Get(ctx, ConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm2.Data = map[string]string{"grace-seconds": "3"}
	if _, err := w.Client().CoreV1().ConfigMaps(ns).Update(ctx, cm2, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	world.Until(t, 30*time.Second, "grace 3", func() bool { return s.Load().Policy.GraceSeconds == 3 })
}

// messages is a slog.Handler that keeps the messages logged.
type messages struct {
	mu   sync.Mutex
	msgs []string
}

func (m *messages) Enabled(context.Context, slog.Level) bool { return true }
func (m *messages) WithAttrs([]slog.Attr) slog.Handler       { return m }
func (m *messages) WithGroup(string) slog.Handler            { return m }

func (m *messages) Handle(_ context.Context, r slog.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.msgs = append(m.msgs, r.Message)
	return nil
}

func (m *messages) has(prefix string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, msg := range m.msgs {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}
