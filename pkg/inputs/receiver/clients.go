package receiver

import (
	"math"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// maxClients bounds the failed-authentication table; when it is full,
// clients whose bucket has refilled are forgotten first.
const maxClients = 4096

// clients limits failed authentications per client. A client whose bucket
// is empty has its failed deliveries answered 429 with a Retry-After; a
// delivery that authenticates never takes from the bucket and is never
// refused by it, whatever else comes from its address.
type clients struct {
	limit   RateLimit
	proxies []netip.Prefix
	now     func() time.Time

	mu sync.Mutex
	m  map[netip.Addr]*rate.Limiter
}

func newClients(l RateLimit, proxies []netip.Prefix) *clients {
	if l.Burst == 0 {
		l.Burst = max(1, int(math.Ceil(l.PerSecond)))
	}
	return &clients{limit: l, proxies: proxies, now: time.Now, m: map[netip.Addr]*rate.Limiter{}}
}

// blocked reports whether the client used up its failures, and how many
// seconds until it may try again.
func (c *clients) blocked(ip netip.Addr) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.m[ip]
	if l == nil {
		return 0, false
	}
	now := c.now()
	if t := l.TokensAt(now); t < 1 {
		return int(math.Ceil((1 - t) / c.limit.PerSecond)), true
	}
	return 0, false
}

// failed records one failed authentication of the client.
func (c *clients) failed(ip netip.Addr) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.m[ip]
	if l == nil {
		if len(c.m) >= maxClients {
			c.evict()
		}
		l = rate.NewLimiter(rate.Limit(c.limit.PerSecond), c.limit.Burst)
		c.m[ip] = l
	}
	l.AllowN(c.now(), 1)
}

// evict forgets clients whose bucket is full again, or everyone if none is.
func (c *clients) evict() {
	now := c.now()
	for ip, l := range c.m {
		if l.TokensAt(now) >= float64(c.limit.Burst) {
			delete(c.m, ip)
		}
	}
	if len(c.m) >= maxClients {
		clear(c.m)
	}
}

// client is the address a delivery comes from: the peer, or, when the peer
// is a trusted proxy, the last address of X-Forwarded-For that is not one.
func (c *clients) client(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	ip = ip.Unmap()
	if !c.trusted(ip) {
		return ip
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return ip
		}
		if hop = hop.Unmap(); !c.trusted(hop) {
			return hop
		}
	}
	return ip
}

func (c *clients) trusted(ip netip.Addr) bool {
	for _, p := range c.proxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// ParseCIDR reads "10.0.0.0/8" or a single address (a /32 or /128).
func ParseCIDR(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "/") {
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, err
		}
		return netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return p.Masked(), nil
}
