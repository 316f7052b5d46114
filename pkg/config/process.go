package config

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/inplace-dev/inplace/pkg/bus"
	"github.com/inplace-dev/inplace/pkg/bus/fleetnet"
	"github.com/inplace-dev/inplace/pkg/core/fleet"
)

// Process is how one `inplace run` process is wired. It is parsed once at
// start from flags, each of which may also come from an INPLACE_* variable.
type Process struct {
	// NATSURL points at an existing NATS (JetStream) server or cluster;
	// empty starts an embedded server.
	NATSURL string
	// NATSListen is where the embedded server listens.
	NATSListen string
	// NATSDataDir is the embedded server's JetStream store.
	NATSDataDir string
	// NATSCredentials is a directory of identities, one per function
	// (<identity>.nk nkey seed or <identity>.creds JWT credentials, see
	// busauth); each function connects as its own. The embedded server
	// makes them (default <NATSDataDir>/credentials) and takes no other
	// client. Empty with NATSURL: one unauthenticated connection.
	NATSCredentials string
	// NATSTLSCA, NATSTLSCert and NATSTLSKey secure the connections: the CA
	// that signed the server's certificate, and a client certificate. The
	// embedded server serves TLS with NATSTLSCert/NATSTLSKey when set.
	NATSTLSCA, NATSTLSCert, NATSTLSKey string
	// FleetMember, when set, makes the process a member of a fleet under
	// that cluster name: its NATS is a leaf node of the hub whose JetStream
	// domain is this name; the process sets up the member's fleet streams
	// (fleetnet.SetupMember, forwarding its rollout outcomes to the hub) and
	// moves each push the hub releases to it onto its own bus
	// (fleetnet.Bridge).
	FleetMember string
	// FleetHub makes the process a fleet's hub: it runs the promotion
	// controller (pkg/controller/fleet) on its NATS, the hub's, under the
	// policy of FleetPolicy, beside the receiver; a push it receives starts
	// the fleet. It runs none of the chain's functions (the members do).
	FleetHub bool
	// FleetPolicy is the file of the hub's fleet policy (YAML or JSON,
	// pkg/core/fleet.Policy); Validate reads it into Fleet.
	FleetPolicy string
	// Fleet is the hub's policy as read from FleetPolicy. Not a flag.
	Fleet fleet.Policy
	// Kubeconfig is a kubeconfig path; empty means in-cluster.
	Kubeconfig string
	// KubeQPS and KubeBurst bound the process's requests to the API server
	// (client-side; negative QPS: no client limit, API Priority and
	// Fairness alone). Reads come from informer caches, so this budget is
	// the writes'. EventsQPS and EventsBurst are the Kubernetes Events'
	// own budget, so a burst of Events never delays a write.
	KubeQPS, EventsQPS     float64
	KubeBurst, EventsBurst int
	// WrapTransport, when set, wraps the API client's transport (tests
	// count requests with it). Not a flag.
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// HTTPAddr serves /healthz, /readyz, /metrics and the webhook receiver.
	HTTPAddr string
	// Functions names the functions this process runs.
	Functions []string
	// Namespace holds the config-inplace ConfigMap.
	Namespace string
	// HooksConfig is the receiver's route file (formats, auth, limits).
	HooksConfig string
	// TrustedProxies are the CIDRs (or addresses) of the proxies in front
	// of the receiver (an ingress) whose X-Forwarded-For names the client;
	// set, they replace the route file's trustedProxies. The receiver
	// checks them when it starts.
	TrustedProxies []string
	// WatchPods runs the pod watcher that feeds verify.
	WatchPods bool
	// Workers is how many events of one function are handled at once.
	Workers int
	// Bus is the stream configuration.
	Bus bus.Config
	// LogLevel is debug, info, warn or error.
	LogLevel string
	// PrometheusURL is the Prometheus (http(s)://host[:port][/path]) the
	// canary analyses (inplace.dev/analysis) query; empty: a rollout that
	// asks for an analysis halts inconclusive, never promoted.
	PrometheusURL string
	// WatchdogPeriod is how often compute-spec's watchdog enforces the
	// deadlines of the rollouts in flight.
	WatchdogPeriod time.Duration
}

// DefaultWorkers is how many events of one function are handled at once.
// A delivery mostly waits (the bus's round trips for a lease, the record
// and the publish; the API server's for the patch), so a few workers left
// both cores idle: the scale run (1,000 pods) went from 35.6 to 46.3
// pods/s between 4 and 16 on the same machine. Leases keep one decision
// at a time per pod whatever the number.
const DefaultWorkers = 16

// The client-side rate limits by default: above kube-scheduler's and the
// kubelet's 50/100, since a rollout of 1,000 pods writes each once or three
// times; the API server's Priority and Fairness still applies.
const (
	DefaultKubeQPS     = 200
	DefaultKubeBurst   = 400
	DefaultEventsQPS   = 50
	DefaultEventsBurst = 100
)

// AllFunctions are the functions of the chain, in order.
// The poller is a source beside the receiver: it asks registries for the
// tags opted-in workloads could move to (pkg/inputs/poll).
var AllFunctions = []string{"receiver", "poller", "compute-spec", "pre-pull", "patch-pod", "verify"}

// env is the variable a flag may come from: --nats-url ↔ INPLACE_NATS_URL.
func env(flag string) string {
	return "INPLACE_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// BindFlags registers the process flags on fs with defaults taken from the
// environment. A malformed variable is an error naming it.
func BindFlags(fs *pflag.FlagSet, p *Process) error {
	p.Bus = bus.DefaultConfig()
	var errs []string
	str := func(dst *string, name, def, usage string) {
		if v, ok := os.LookupEnv(env(name)); ok {
			def = v
		}
		fs.StringVar(dst, name, def, usage+" (env "+env(name)+")")
	}
	num := func(dst *int, name string, def int, usage string) {
		if v, ok := os.LookupEnv(env(name)); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s=%q: not an integer", env(name), v))
			}
			def = n
		}
		fs.IntVar(dst, name, def, usage+" (env "+env(name)+")")
	}
	dur := func(dst *time.Duration, name string, def time.Duration, usage string) {
		if v, ok := os.LookupEnv(env(name)); ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s=%q: not a duration", env(name), v))
			}
			def = d
		}
		fs.DurationVar(dst, name, def, usage+" (env "+env(name)+")")
	}
	float := func(dst *float64, name string, def float64, usage string) {
		if v, ok := os.LookupEnv(env(name)); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s=%q: not a number", env(name), v))
			}
			def = f
		}
		fs.Float64Var(dst, name, def, usage+" (env "+env(name)+")")
	}
	boolean := func(dst *bool, name string, def bool, usage string) {
		if v, ok := os.LookupEnv(env(name)); ok {
			b, err := strconv.ParseBool(v)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s=%q: not a boolean", env(name), v))
			}
			def = b
		}
		fs.BoolVar(dst, name, def, usage+" (env "+env(name)+")")
	}
	str(&p.NATSURL, "nats-url", "", "NATS server or cluster URL; empty starts an embedded server")
	str(&p.NATSListen, "nats-listen", "127.0.0.1:4222", "host:port of the embedded NATS server")
	str(&p.NATSDataDir, "nats-data-dir", ".inplace/nats", "JetStream store of the embedded NATS server")
	str(&p.NATSCredentials, "nats-credentials", "", "directory of NATS identities, <identity>.nk or .creds, one per function "+
		"(embedded server: made in <nats-data-dir>/credentials)")
	str(&p.NATSTLSCA, "nats-tls-ca", "", "CA certificate of the NATS server (TLS)")
	str(&p.NATSTLSCert, "nats-tls-cert", "", "TLS client certificate; the embedded server's certificate when it runs one")
	str(&p.NATSTLSKey, "nats-tls-key", "", "key of --nats-tls-cert")
	str(&p.FleetMember, "fleet-member", "", "this cluster's name in a fleet: report rollout outcomes to the hub and run the pushes it releases")
	boolean(&p.FleetHub, "fleet-hub", false, "run as a fleet's hub: promote each push through the member clusters of --fleet-policy, stage by stage")
	str(&p.FleetPolicy, "fleet-policy", "", "the fleet policy file of --fleet-hub (YAML or JSON: workloads, and stages of clusters in promotion order)")
	str(&p.Kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig path; empty means in-cluster")
	float(&p.KubeQPS, "kube-qps", DefaultKubeQPS, "API requests per second (client-side; negative: no client limit)")
	num(&p.KubeBurst, "kube-burst", DefaultKubeBurst, "API requests allowed at once above --kube-qps")
	float(&p.EventsQPS, "events-qps", DefaultEventsQPS, "Kubernetes Events per second, a budget of their own")
	num(&p.EventsBurst, "events-burst", DefaultEventsBurst, "Kubernetes Events allowed at once above --events-qps")
	str(&p.HTTPAddr, "http-addr", "127.0.0.1:8080", "address for /healthz, /readyz, /metrics and /hooks/")
	// --namespace (INPLACE_NAMESPACE) is the name this flag had; kept hidden
	// so manifests and scripts that set it go on working. In the operator's
	// commands -n/--namespace is the workloads' namespace, as in kubectl.
	str(&p.Namespace, "namespace", "inplace-system", "same as --config-namespace")
	_ = fs.MarkHidden("namespace")
	str(&p.Namespace, "config-namespace", p.Namespace, "namespace of inplace itself: the config-inplace ConfigMap")
	str(&p.HooksConfig, "hooks-config", "", "webhook routes file (formats, auth, limits)")
	var proxies []string
	if v, ok := os.LookupEnv(env("trusted-proxies")); ok && v != "" {
		proxies = strings.Split(v, ",")
	}
	fs.StringSliceVar(&p.TrustedProxies, "trusted-proxies", proxies, "CIDRs of the proxies (an ingress) whose X-Forwarded-For names "+
		"a webhook's client; replaces the hooks config's trustedProxies (env "+env("trusted-proxies")+")")
	str(&p.LogLevel, "log-level", "info", "debug, info, warn or error")
	boolean(&p.WatchPods, "watch-pods", true, "run the pod watcher that feeds verify")
	num(&p.Workers, "workers", DefaultWorkers, "events of one function handled at once")
	str(&p.Bus.Stream, "stream", p.Bus.Stream, "JetStream stream name")
	num(&p.Bus.Replicas, "replicas", p.Bus.Replicas, "stream and KV replicas (3 on a NATS cluster)")
	dur(&p.Bus.AckWait, "ack-wait", p.Bus.AckWait, "how long an event may stay unsettled")
	dur(&p.Bus.PinnedTTL, "pinned-ttl", p.Bus.PinnedTTL, "how long compute-spec's consumer, which delivers to one replica at a time, "+
		"waits for a replica that stopped pulling before it delivers to another")
	dur(&p.Bus.MaxAge, "retention", p.Bus.MaxAge, "how long events are kept for tail, trace and replay")
	durs := func(dst *[]time.Duration, name string, def []time.Duration, usage string) {
		if v, ok := os.LookupEnv(env(name)); ok {
			def = nil
			for _, part := range strings.Split(v, ",") {
				d, err := time.ParseDuration(strings.TrimSpace(part))
				if err != nil {
					errs = append(errs, fmt.Sprintf("%s=%q: not a list of durations", env(name), v))
					break
				}
				def = append(def, d)
			}
		}
		fs.DurationSliceVar(dst, name, def, usage+" (env "+env(name)+")")
	}
	durs(&p.Bus.Backoff, "retry-backoff", p.Bus.Backoff, "delays before the retries of a failed event (the last repeats)")
	num(&p.Bus.RetryLimit, "retry-limit", p.Bus.RetryLimit, "failed deliveries of an event before it is dead-lettered")
	str(&p.PrometheusURL, "prometheus-url", "", "Prometheus the canary analyses (inplace.dev/analysis) query, e.g. http://prometheus.monitoring:9090; empty: a rollout asking for one halts inconclusive")
	dur(&p.WatchdogPeriod, "watchdog-period", 30*time.Second, "how often compute-spec enforces the deadlines of rollouts in flight")
	fns := strings.Join(AllFunctions, ",")
	if v, ok := os.LookupEnv(env("functions")); ok {
		fns = v
	}
	fs.StringSliceVar(&p.Functions, "functions", strings.Split(fns, ","), "functions to run (env "+env("functions")+")")
	if len(errs) > 0 {
		return fmt.Errorf("configuration: %s", strings.Join(errs, "; "))
	}
	return nil
}

// Validate checks the parsed process configuration, naming the bad flag.
func (p *Process) Validate() error {
	for _, f := range p.Functions {
		if !contains(AllFunctions, f) {
			return fmt.Errorf("--functions: %q is not one of %s", f, strings.Join(AllFunctions, ", "))
		}
	}
	switch p.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("--log-level: %q is not debug, info, warn or error", p.LogLevel)
	}
	for _, l := range []struct {
		name  string
		qps   float64
		burst int
	}{{"kube", p.KubeQPS, p.KubeBurst}, {"events", p.EventsQPS, p.EventsBurst}} {
		if l.qps == 0 {
			return fmt.Errorf("--%s-qps: 0 would stop every request; negative turns the client limit off", l.name)
		}
		if l.qps > 0 && l.burst <= 0 {
			return fmt.Errorf("--%s-burst: must be positive, not %d", l.name, l.burst)
		}
	}
	if p.Workers <= 0 {
		return fmt.Errorf("--workers: must be positive, not %d", p.Workers)
	}
	if p.Bus.Replicas != 1 && p.Bus.Replicas != 3 && p.Bus.Replicas != 5 {
		return fmt.Errorf("--replicas: %d; JetStream wants 1, 3 or 5", p.Bus.Replicas)
	}
	if p.Bus.AckWait < 2*time.Second {
		return fmt.Errorf("--ack-wait: %s is too short (at least 2s)", p.Bus.AckWait)
	}
	if p.Bus.PinnedTTL < 3*time.Second {
		return fmt.Errorf("--pinned-ttl: %s is too short (at least 3s)", p.Bus.PinnedTTL)
	}
	if p.Bus.RetryLimit <= 0 {
		return fmt.Errorf("--retry-limit: must be positive, not %d", p.Bus.RetryLimit)
	}
	for _, d := range p.Bus.Backoff {
		if d <= 0 {
			return fmt.Errorf("--retry-backoff: %s is not positive", d)
		}
	}
	if u, err := url.Parse(p.PrometheusURL); p.PrometheusURL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		return fmt.Errorf("--prometheus-url: %q: want http(s)://host[:port][/path]", p.PrometheusURL)
	}
	if p.WatchdogPeriod <= 0 {
		return fmt.Errorf("--watchdog-period: must be positive, not %s", p.WatchdogPeriod)
	}
	if p.NATSURL == "" && p.NATSDataDir == "" {
		return fmt.Errorf("--nats-data-dir: required for the embedded NATS server")
	}
	if p.FleetMember != "" {
		if err := fleetnet.ValidCluster(p.FleetMember); err != nil {
			return fmt.Errorf("--fleet-member: %w", err)
		}
	}
	if err := p.validateHub(); err != nil {
		return err
	}
	if (p.NATSTLSCert == "") != (p.NATSTLSKey == "") {
		return fmt.Errorf("--nats-tls-cert and --nats-tls-key: give both or neither")
	}
	return nil
}

// CredentialsDir is where the process's NATS identities are: the
// configured directory, or the embedded server's own.
func (p *Process) CredentialsDir() string {
	if p.NATSCredentials == "" && p.NATSURL == "" {
		return filepath.Join(p.NATSDataDir, "credentials")
	}
	return p.NATSCredentials
}

// Runs reports whether the process runs the named function.
func (p *Process) Runs(name string) bool { return contains(p.Functions, name) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
