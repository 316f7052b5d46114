package prometheus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/inplace-dev/inplace/pkg/core/settle"
)

// Defaults of a Client.
const (
	DefaultTimeout  = 10 * time.Second
	DefaultMaxBytes = 1 << 20
)

// Config says where Prometheus is and how long and how much to wait for.
type Config struct {
	// URL is the server's base, e.g. http://prometheus.monitoring:9090;
	// the API path is added to it.
	URL string
	// Timeout bounds one query, on the wire and in Prometheus (its
	// timeout parameter). Default DefaultTimeout.
	Timeout time.Duration
	// MaxBytes bounds an answer's body. Default DefaultMaxBytes.
	MaxBytes int64
	// HTTP is the client used; default a new http.Client.
	HTTP *http.Client
}

// Client runs instant queries.
type Client struct {
	endpoint string
	timeout  time.Duration
	maxBytes int64
	http     *http.Client
}

// New checks cfg (an absolute http or https URL, no negative bounds) and
// makes a Client.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("prometheus: url %q: want http(s)://host[:port][/path]", cfg.URL)
	}
	if cfg.Timeout < 0 || cfg.MaxBytes < 0 {
		return nil, fmt.Errorf("prometheus: timeout %s and max bytes %d: want at least 0", cfg.Timeout, cfg.MaxBytes)
	}
	c := &Client{
		endpoint: strings.TrimSuffix(u.String(), "/") + "/api/v1/query",
		timeout:  cfg.Timeout, maxBytes: cfg.MaxBytes, http: cfg.HTTP,
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.maxBytes == 0 {
		c.maxBytes = DefaultMaxBytes
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	return c, nil
}

// Query evaluates expr at the instant at and returns its one value: the
// scalar, or the sample of a vector of one series; nil for an empty
// vector (no data). More than one series is an error: a query for
// analysis must aggregate.
func (c *Client) Query(ctx context.Context, expr string, at time.Time) (*float64, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	form := url.Values{
		"query":   {expr},
		"time":    {strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)},
		"timeout": {c.timeout.String()},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, settle.Permanent(fmt.Errorf("prometheus query: %w", err))
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("prometheus query: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("prometheus query: read answer: %w", err)
	}
	if int64(len(body)) > c.maxBytes {
		return nil, fmt.Errorf("prometheus query: answer larger than %d bytes", c.maxBytes)
	}
	v, err := decode(resp.StatusCode, resp.Header.Get("Content-Type"), body)
	if err != nil {
		return nil, fmt.Errorf("prometheus query: %w", err)
	}
	return v, nil
}

// errRefused marks answers that a retry cannot change: the query is wrong.
var errRefused = errors.New("query refused")

// classify keeps server-side trouble retryable and makes a refused query
// permanent.
func classify(status int, err error) error {
	if status == http.StatusBadRequest || status == http.StatusUnprocessableEntity || errors.Is(err, errRefused) {
		return settle.Permanent(err)
	}
	return err
}
