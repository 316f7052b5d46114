package faults

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// faultProxy stands in front of the API server and answers bursts of
// requests (every request for 0.3-1s, then none for 0.3-1.3s) with the errors a busy or failing control plane gives: 409
// Conflict (writes), 429 with Retry-After, 500, 503 and 504, some of the
// 5xx after the request was forwarded (the write happened; the client
// cannot know). A watch may be refused when it starts; once started it
// streams.
type faultProxy struct {
	srv      *httptest.Server
	upstream *httputil.ReverseProxy

	mu  sync.Mutex
	rng *rand.Rand
	// A burst fails every request from its start until its end; the next
	// one starts a few seconds later.
	start, end time.Time

	injected atomic.Int64
	byCode   sync.Map // code → *atomic.Int64
}

func newFaultProxy(t *testing.T, cfg *rest.Config) *faultProxy {
	t.Helper()
	tr, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = tr
	rp.FlushInterval = -1 // watches stream
	rp.ErrorLog = log.New(io.Discard, "", 0)
	p := &faultProxy{upstream: rp, rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))}
	p.start = time.Now().Add(time.Second)
	p.end = p.start.Add(p.length())
	p.srv = httptest.NewUnstartedServer(p)
	p.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	p.srv.StartTLS()
	t.Cleanup(func() {
		p.srv.CloseClientConnections() // watches never end by themselves
		p.srv.Close()
	})
	return p
}

// kubeconfig writes a kubeconfig for the proxy (which authenticates
// upstream itself).
func (p *faultProxy) kubeconfig(t *testing.T, dir string) string {
	t.Helper()
	c := clientcmdapi.NewConfig()
	c.Clusters["proxy"] = &clientcmdapi.Cluster{Server: p.srv.URL, InsecureSkipTLSVerify: true}
	c.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{Token: "unused"}
	c.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	c.CurrentContext = "proxy"
	path := filepath.Join(dir, "proxy.kubeconfig")
	if err := clientcmd.WriteToFile(*c, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	code, after := p.fault(r.Method)
	if code == 0 {
		p.upstream.ServeHTTP(w, r)
		return
	}
	p.injected.Add(1)
	n, _ := p.byCode.LoadOrStore(code, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	if after {
		p.upstream.ServeHTTP(discard{header: http.Header{}}, r) // the write happens; the answer is lost
	}
	writeStatus(w, code)
}

// fault decides the fate of one request: 0 to forward it, or the status
// to answer (after forwarding it, when after is true).
func (p *faultProxy) fault(method string) (code int, after bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.After(p.end) {
		p.start = now.Add(time.Duration(300+p.rng.IntN(1000)) * time.Millisecond)
		p.end = p.start.Add(p.length())
	}
	if now.Before(p.start) {
		return 0, false
	}
	write := method != http.MethodGet
	codes := []int{http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusServiceUnavailable, http.StatusGatewayTimeout}
	if write {
		codes = append(codes, http.StatusConflict, http.StatusConflict)
	}
	code = codes[p.rng.IntN(len(codes))]
	after = write && code >= 500 && p.rng.IntN(2) == 0
	return code, after
}

// length is how long a burst lasts: 300ms to 1s.
func (p *faultProxy) length() time.Duration {
	return time.Duration(300+p.rng.IntN(700)) * time.Millisecond
}

// counts summarises the injected answers by status.
func (p *faultProxy) counts() string {
	var parts []string
	for _, c := range []int{409, 429, 500, 503, 504} {
		if n, ok := p.byCode.Load(c); ok {
			parts = append(parts, fmt.Sprintf("%d×%d", n.(*atomic.Int64).Load(), c))
		}
	}
	return strings.Join(parts, " ")
}

// writeStatus answers code with a metav1.Status, as the API server does.
func writeStatus(w http.ResponseWriter, code int) {
	reasons := map[int]metav1.StatusReason{409: metav1.StatusReasonConflict, 429: metav1.StatusReasonTooManyRequests,
		500: metav1.StatusReasonInternalError, 503: metav1.StatusReasonServiceUnavailable, 504: metav1.StatusReasonTimeout}
	st := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Code: int32(code), Reason: reasons[code], Message: "injected by the fault proxy"}
	if code == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
		st.Details = &metav1.StatusDetails{RetryAfterSeconds: 1}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(st)
}

// discard is a ResponseWriter that drops the answer.
type discard struct{ header http.Header }

func (d discard) Header() http.Header         { return d.header }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}

// TestAPIServerFaults runs the rollout through a proxy that answers bursts
// of the process's API requests with 409, 429 and 5xx.
func TestAPIServerFaults(t *testing.T) {
	for run := range runs {
		t.Run(strconv.Itoa(run), func(t *testing.T) {
			e := newEnv(t, 1)
			proxy := newFaultProxy(t, e.w.RestConfig())
			e.kubeconfig = proxy.kubeconfig(t, e.dir)
			e.startChild()
			e.deploy(int32(pods), map[string]string{"inplace.dev/max-unavailable": "1", "inplace.dev/grace-seconds": "1"})
			base := e.pods()
			before := proxy.injected.Load()
			p := e.push("1.1.0")
			e.done(p, 4*time.Minute)
			n := int(proxy.injected.Load() - before)
			t.Logf("injected %d faulty answers during the rollout (%s in all)", n, proxy.counts())
			record(t, "API server answering bursts of 409/429/5xx", "faulty answers", 1, n, pods, e.check(base, []pushed{p}))
		})
	}
}
