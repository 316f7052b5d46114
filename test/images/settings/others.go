package settings

import (
	"errors"
	"strconv"
	"time"
)

// Variables of the init program.
const (
	InitSleepVar    = "INIT_SLEEP"
	InitExitCodeVar = "INIT_EXIT_CODE"
)

// Init configures the init-container program: it sleeps, then exits with
// ExitCode.
type Init struct {
	Sleep    time.Duration
	ExitCode int
}

// DefaultInit sleeps a second and succeeds.
var DefaultInit = Init{Sleep: time.Second}

// Env formats i as env entries.
func (i Init) Env() []string {
	return []string{InitSleepVar + "=" + i.Sleep.String(), InitExitCodeVar + "=" + strconv.Itoa(i.ExitCode)}
}

// ParseInit reads the init program's settings, starting from defaults.
func ParseInit(lookup func(string) (string, bool), defaults Init) (Init, error) {
	i := defaults
	p := parser{lookup: lookup}
	p.duration(InitSleepVar, &i.Sleep)
	p.integer(InitExitCodeVar, &i.ExitCode)
	return i, errors.Join(p.errs...)
}

// Variables of the traffic probe program.
const (
	ProbeURLVar     = "PROBE_URL"
	ProbeRateVar    = "PROBE_RATE"
	ProbeTimeoutVar = "PROBE_TIMEOUT"
	ProbeListenVar  = "PROBE_LISTEN"
)

// Probe configures the traffic probe program.
type Probe struct {
	// URL is requested Rate times a second, each request on a new
	// connection and bounded by Timeout.
	URL     string
	Rate    float64
	Timeout time.Duration
	// Listen is where the probe serves /counts, /stop and /readyz.
	Listen string
}

// DefaultProbe sends 50 requests a second with a 1 s timeout.
var DefaultProbe = Probe{Rate: 50, Timeout: time.Second, Listen: ":8080"}

// Env formats p as env entries.
func (p Probe) Env() []string {
	var env []string
	if p.URL != "" {
		env = append(env, ProbeURLVar+"="+p.URL)
	}
	if p.Rate != 0 {
		env = append(env, ProbeRateVar+"="+strconv.FormatFloat(p.Rate, 'g', -1, 64))
	}
	if p.Timeout != 0 {
		env = append(env, ProbeTimeoutVar+"="+p.Timeout.String())
	}
	if p.Listen != "" {
		env = append(env, ProbeListenVar+"="+p.Listen)
	}
	return env
}

// ParseProbe reads the probe's settings, starting from defaults; the URL
// is required.
func ParseProbe(lookup func(string) (string, bool), defaults Probe) (Probe, error) {
	pr := defaults
	p := parser{lookup: lookup}
	p.str(ProbeURLVar, &pr.URL)
	p.positive(ProbeRateVar, &pr.Rate)
	p.duration(ProbeTimeoutVar, &pr.Timeout)
	p.str(ProbeListenVar, &pr.Listen)
	if pr.URL == "" {
		p.errs = append(p.errs, errors.New(ProbeURLVar+" is not set: want the URL to send requests to"))
	}
	if pr.Timeout <= 0 {
		p.errs = append(p.errs, errors.New(ProbeTimeoutVar+": want a timeout above 0"))
	}
	return pr, errors.Join(p.errs...)
}
