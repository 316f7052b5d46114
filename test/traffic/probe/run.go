package probe

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/inplace-dev/inplace/test/images/settings"
)

// Prober sends requests and counts them. Use New, then Run.
type Prober struct {
	url     string
	rate    float64
	timeout time.Duration
	client  *http.Client

	mu     sync.Mutex
	counts Counts
}

// New makes a prober sending rate requests a second to url, each bounded
// by timeout.
func New(url string, rate float64, timeout time.Duration) (*Prober, error) {
	if rate <= 0 || timeout <= 0 {
		return nil, fmt.Errorf("probe %s: rate %g and timeout %s: want both above 0", url, rate, timeout)
	}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	tr := &http.Transport{DisableKeepAlives: true, Proxy: nil, MaxIdleConns: -1}
	return &Prober{
		url: req.URL.String(), rate: rate, timeout: timeout,
		client: &http.Client{Transport: tr, Timeout: timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		counts: Counts{Versions: map[string]int64{}, FailedVersions: map[string]int64{}},
	}, nil
}

// Run sends requests at the prober's rate until ctx ends, then waits for
// the requests in flight to end and returns the final counts.
func (p *Prober) Run(ctx context.Context) Counts {
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Duration(float64(time.Second) / p.rate))
	defer tick.Stop()
	for {
		p.send(&wg)
		select {
		case <-ctx.Done():
			wg.Wait()
			return p.Counts()
		case <-tick.C:
		}
	}
}

// Counts are the counts so far.
func (p *Prober) Counts() Counts {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.counts.clone()
	c.At = time.Now()
	return c
}

// send starts one request. Each is bounded by the prober's timeout, not by
// Run's context, so a stop lets the requests in flight finish.
func (p *Prober) send(wg *sync.WaitGroup) {
	p.mu.Lock()
	p.counts.Sent++
	p.mu.Unlock()
	wg.Go(func() {
		version, code, err := p.get()
		p.record(classify(err, code), version, code, err)
	})
}

// get requests the URL once and returns the version answered.
func (p *Prober) get() (string, int, error) {
	resp, err := p.client.Get(p.url)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if err != nil {
		return "", resp.StatusCode, err
	}
	v := resp.Header.Get(settings.VersionHeader)
	if v == "" {
		line, _, _ := strings.Cut(string(body), "\n")
		v = strings.TrimSpace(line)
	}
	return v, resp.StatusCode, nil
}

func (p *Prober) record(o outcome, version string, code int, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := &p.counts
	if o == ok {
		c.OK++
		c.Versions[version]++
		return
	}
	c.Failed++
	switch o {
	case refused:
		c.Refused++
	case reset:
		c.Reset++
	case timeout:
		c.Timeout++
	case serverError:
		c.ServerError++
	default:
		c.Other++
	}
	if err == nil {
		c.FailedVersions[version]++
		err = fmt.Errorf("status %d from version %q", code, version)
	}
	c.Samples = append(c.Samples, Sample{At: time.Now(), Error: err.Error()})
	if len(c.Samples) > maxSamples {
		c.Samples = c.Samples[len(c.Samples)-maxSamples:]
	}
}
