package registry

import (
	"context"
	"io"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/sirupsen/logrus"
)

// Distribution (and the go-events queue behind its notifications) log
// through logrus' process-wide standard logger, so its output can only be
// routed process-wide: the registry started last receives it.
var (
	hookOnce sync.Once
	logSink  atomic.Pointer[slog.Logger]
)

// routeLogs sends Distribution's logs to l from now on.
func routeLogs(l *slog.Logger) {
	hookOnce.Do(func() {
		logrus.SetOutput(io.Discard)
		logrus.AddHook(slogHook{})
	})
	logSink.Store(l)
}

// unrouteLogs stops sending logs to l if it still receives them, so nothing
// logs to a test that has ended.
func unrouteLogs(l *slog.Logger) {
	logSink.CompareAndSwap(l, nil)
}

// slogHook forwards logrus entries to the current logSink.
type slogHook struct{}

func (slogHook) Levels() []logrus.Level { return logrus.AllLevels }

func (slogHook) Fire(e *logrus.Entry) error {
	l := logSink.Load()
	if l == nil {
		return nil
	}
	level := slogLevel(e.Level)
	if status, ok := e.Data["http.response.status"].(int); ok && status < 500 {
		// A 404 for a blob or tag a client probes is the normal flow.
		level = min(level, slog.LevelDebug)
	}
	ctx := context.Background()
	if !l.Enabled(ctx, level) {
		return nil
	}
	keys := make([]string, 0, len(e.Data))
	for k := range e.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	attrs := make([]slog.Attr, 0, len(keys))
	for _, k := range keys {
		attrs = append(attrs, slog.Any(k, e.Data[k]))
	}
	l.LogAttrs(ctx, level, "distribution: "+e.Message, attrs...)
	return nil
}

// slogLevel maps logrus levels one step down: Distribution logs every
// request at info, which is debug for a test.
func slogLevel(l logrus.Level) slog.Level {
	switch {
	case l <= logrus.ErrorLevel:
		return slog.LevelError
	case l == logrus.WarnLevel:
		return slog.LevelWarn
	case l == logrus.InfoLevel:
		return slog.LevelDebug
	default:
		return slog.LevelDebug - 4
	}
}
