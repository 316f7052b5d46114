package settings

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// VersionHeader is the response header in which the app and the sidecar
// name their version (the body says it too).
const VersionHeader = "X-Version"

// Prefixes of the server programs' variables: APP_VERSION,
// SIDECAR_VERSION, ...
const (
	AppPrefix     = "APP_"
	SidecarPrefix = "SIDECAR_"
)

// Suffixes of a server's variables after its prefix. None ends in _PORT
// or _SERVICE_HOST: the kubelet injects <SERVICE>_PORT and friends for
// every Service of the namespace, and a Service named "app" would
// otherwise set APP_PORT.
const (
	VersionVar    = "VERSION"
	ListenVar     = "LISTEN"
	StartDelayVar = "START_DELAY"
	StopDelayVar  = "STOP_DELAY"
	CrashVar      = "CRASH"
	ErrorRateVar  = "ERROR_RATE"
	LatencyVar    = "LATENCY"
)

// Server configures the app and the sidecar.
type Server struct {
	// Version is answered to every request.
	Version string
	// Listen is the address to serve on, e.g. ":8080".
	Listen string
	// StartDelay is how long /readyz answers 503 after the start.
	StartDelay time.Duration
	// StopDelay is how long the server keeps serving after SIGTERM (with
	// /readyz 503 and connections closed after each answer) before it
	// shuts down and exits 0.
	StopDelay time.Duration
	// Crash makes the program exit 1 at once, so the kubelet crash-loops it.
	Crash bool
	// ErrorRate is the share of requests (0 to 1) answered 500, spread
	// evenly over the requests, while /readyz stays 200.
	ErrorRate float64
	// Latency is added to every answer.
	Latency time.Duration
}

// DefaultApp and DefaultSidecar are what a server program uses for a
// variable that is not set.
var (
	DefaultApp     = Server{Version: "unknown", Listen: ":8080"}
	DefaultSidecar = Server{Version: "unknown", Listen: ":9090"}
)

// Env formats s as env entries (prefix + suffix = value), only the fields
// that differ from the zero value.
func (s Server) Env(prefix string) []string {
	var env []string
	add := func(k, v string) { env = append(env, prefix+k+"="+v) }
	if s.Version != "" {
		add(VersionVar, s.Version)
	}
	if s.Listen != "" {
		add(ListenVar, s.Listen)
	}
	if s.StartDelay != 0 {
		add(StartDelayVar, s.StartDelay.String())
	}
	if s.StopDelay != 0 {
		add(StopDelayVar, s.StopDelay.String())
	}
	if s.Crash {
		add(CrashVar, "true")
	}
	if s.ErrorRate != 0 {
		add(ErrorRateVar, strconv.FormatFloat(s.ErrorRate, 'g', -1, 64))
	}
	if s.Latency != 0 {
		add(LatencyVar, s.Latency.String())
	}
	return env
}

// ParseServer reads a server's settings from lookup (os.LookupEnv),
// starting from defaults.
func ParseServer(prefix string, lookup func(string) (string, bool), defaults Server) (Server, error) {
	s := defaults
	p := parser{prefix: prefix, lookup: lookup}
	p.str(VersionVar, &s.Version)
	p.str(ListenVar, &s.Listen)
	p.duration(StartDelayVar, &s.StartDelay)
	p.duration(StopDelayVar, &s.StopDelay)
	p.boolean(CrashVar, &s.Crash)
	p.share(ErrorRateVar, &s.ErrorRate)
	p.duration(LatencyVar, &s.Latency)
	return s, errors.Join(p.errs...)
}

// parser reads variables, collecting an error per bad value.
type parser struct {
	prefix string
	lookup func(string) (string, bool)
	errs   []error
}

func (p *parser) get(suffix string) (string, string, bool) {
	k := p.prefix + suffix
	v, ok := p.lookup(k)
	return k, v, ok
}

func (p *parser) fail(k, v, want string) {
	p.errs = append(p.errs, fmt.Errorf("%s=%q: want %s", k, v, want))
}

func (p *parser) str(suffix string, dst *string) {
	if _, v, ok := p.get(suffix); ok && v != "" {
		*dst = v
	}
}

func (p *parser) duration(suffix string, dst *time.Duration) {
	k, v, ok := p.get(suffix)
	if !ok || v == "" {
		return
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		p.fail(k, v, "a duration such as 1.5s, not negative")
		return
	}
	*dst = d
}

func (p *parser) boolean(suffix string, dst *bool) {
	k, v, ok := p.get(suffix)
	if !ok || v == "" {
		return
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.fail(k, v, "true or false")
		return
	}
	*dst = b
}

func (p *parser) share(suffix string, dst *float64) {
	k, v, ok := p.get(suffix)
	if !ok || v == "" {
		return
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f > 1 {
		p.fail(k, v, "a share between 0 and 1")
		return
	}
	*dst = f
}

func (p *parser) positive(suffix string, dst *float64) {
	k, v, ok := p.get(suffix)
	if !ok || v == "" {
		return
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 {
		p.fail(k, v, "a number above 0")
		return
	}
	*dst = f
}

func (p *parser) integer(suffix string, dst *int) {
	k, v, ok := p.get(suffix)
	if !ok || v == "" {
		return
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 255 {
		p.fail(k, v, "an exit code from 0 to 255")
		return
	}
	*dst = n
}
