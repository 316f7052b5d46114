package function

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	fce "knative.dev/func-go/cloudevents"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/pkg/bus/brokerauth"
	"github.com/inplace-dev/inplace/pkg/inputs/receiver"
	"github.com/inplace-dev/inplace/pkg/kube"
)

// Serve is what the image runs in a Knative Service (`inplace function`):
// the function under func-go's CloudEvents runtime, with RetryAfter; or,
// when INPLACE_FUNCTIONS is "receiver", the webhook receiver publishing
// image.pushed to K_SINK. It returns when ctx ends or on SIGTERM.
func Serve(ctx context.Context) error {
	if strings.TrimSpace(os.Getenv(FunctionsKey)) == "receiver" {
		return serveReceiver(ctx, environ())
	}
	fce.SetLogLevel(fce.LogInfo)
	f := New()
	svc := fce.New(f)
	h, err := f.wrap(svc.Handler, environ())
	if err != nil {
		return err
	}
	svc.Handler = h
	return svc.Start(ctx)
}

// wrap is what Serve puts around func-go's handler: GET /metrics; the
// sender's token checked before anything else when INPLACE_OIDC_AUDIENCE
// is set (brokerauth: a refused request is never decoded); then
// RetryAfter.
func (f *Function) wrap(next http.Handler, cfg map[string]string) (http.Handler, error) {
	reg := prometheus.NewRegistry()
	h := f.RetryAfter(next)
	ac, on, err := brokerauth.FromEnv(cfg)
	if err != nil {
		return nil, fmt.Errorf("function: %w", err)
	}
	if on {
		v, err := senderVerifier(ac, cfg, reg, f.log)
		if err != nil {
			return nil, err
		}
		h = v.Require(h)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.Handle("/", h)
	return mux, nil
}

// senderVerifier reads the issuer's keys with the function's own
// credentials (INPLACE_KUBECONFIG, or in-cluster).
func senderVerifier(ac brokerauth.Config, cfg map[string]string, reg prometheus.Registerer, log *slog.Logger) (*brokerauth.Verifier, error) {
	p, err := processFrom(cfg)
	if err != nil {
		return nil, fmt.Errorf("function: %w", err)
	}
	rc, err := kube.RestConfig(p.Kubeconfig, float32(p.KubeQPS), p.KubeBurst)
	if err != nil {
		return nil, fmt.Errorf("function: sender verification: %w", err)
	}
	cs, err := kube.Client(rc)
	if err != nil {
		return nil, fmt.Errorf("function: sender verification: %w", err)
	}
	return brokerauth.New(ac, cs.Discovery().RESTClient(), reg, log)
}

func environ() map[string]string {
	m := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// serveReceiver runs the receiver behind HTTP on LISTEN_ADDRESS (or :PORT,
// or :8080), with /healthz and /metrics.
func serveReceiver(ctx context.Context, cfg map[string]string) error {
	p, err := processFrom(cfg)
	if err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	pub, err := app.NewSinkPublisher(cfg["K_SINK"])
	if err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	pub.WithTokenFile(sinkTokenFile(cfg))
	reg := prometheus.NewRegistry()
	h, err := app.NewKnativeReceiver(p, pub, reg, log)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(receiver.PathPrefix, h)
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	srv := &http.Server{Addr: listenAddress(cfg), Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	log.Info("inplace receiver ready", "addr", srv.Addr, "sink", pub.Target())
	select {
	case err := <-errc:
		return fmt.Errorf("receiver on %s: %w", srv.Addr, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// SinkTokenFileKey overrides app.SinkTokenFile, where the SinkBinding
// mounts the token sent with each event to K_SINK.
const SinkTokenFileKey = "INPLACE_SINK_TOKEN_FILE"

func sinkTokenFile(cfg map[string]string) string {
	if p := cfg[SinkTokenFileKey]; p != "" {
		return p
	}
	return app.SinkTokenFile
}

func listenAddress(cfg map[string]string) string {
	if a := cfg["LISTEN_ADDRESS"]; a != "" {
		return a
	}
	if p := cfg["PORT"]; p != "" {
		return ":" + p
	}
	return ":8080"
}
