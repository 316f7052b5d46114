package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The API server's requests are counted from its audit log, not from
// apiserver_request_total: the metric has no user or user-agent label, so it
// cannot tell this project's writes from the kubelet's or the controllers'.
// Every request is logged once, at ResponseComplete, with the user, the user
// agent, the verb, the object (namespace, resource, subresource) and the
// response code; lease renewals are left out by the policy.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted, Panic]
rules:
  - level: None
    resources: [{group: coordination.k8s.io, resources: [leases]}]
  - level: Metadata
`

// auditFlags are the kube-apiserver flags that write the audit log to
// dir/audit.log (synchronously, never rotated during a run).
func auditFlags(dir string) ([]string, string, error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, "", fmt.Errorf("audit policy: %w", err)
	}
	log := filepath.Join(dir, "audit.log")
	return []string{
		"--audit-policy-file=" + policy,
		"--audit-log-path=" + log,
		"--audit-log-format=json",
		"--audit-log-mode=blocking",
		"--audit-log-maxsize=100000",
	}, log, nil
}

// request is what the benchmark keeps of one audit event.
type request struct {
	Verb        string
	User        string
	UserAgent   string
	Namespace   string
	Resource    string
	Subresource string
	Name        string
	URI         string
	Code        int
	Received    time.Time
}

// auditEvent is the part of an audit.k8s.io/v1 Event read here.
type auditEvent struct {
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	UserAgent string `json:"userAgent"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
}

// parseAudit reads audit events, one JSON object a line; a line that does
// not parse (one being written) is an error.
func parseAudit(line []byte) (request, error) {
	var e auditEvent
	if err := json.Unmarshal(line, &e); err != nil {
		return request{}, err
	}
	r := request{Verb: e.Verb, User: e.User.Username, UserAgent: e.UserAgent, URI: e.RequestURI, Received: e.RequestReceivedTimestamp}
	if o := e.ObjectRef; o != nil {
		r.Namespace, r.Resource, r.Subresource, r.Name = o.Namespace, o.Resource, o.Subresource, o.Name
	}
	if e.ResponseStatus != nil {
		r.Code = e.ResponseStatus.Code
	}
	return r, nil
}

// auditLog follows the API server's audit log.
type auditLog struct {
	path   string
	mu     sync.Mutex
	offset int64
	reqs   []request
}

// read takes in the lines written since the last read; a partial last line
// is left for the next read.
func (a *auditLog) read() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	f, err := os.Open(a.path)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(a.offset, io.SeekStart); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	br := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
		a.offset += int64(len(line))
		r, perr := parseAudit(line)
		if perr != nil {
			return fmt.Errorf("audit log line at %d: %w", a.offset, perr)
		}
		a.reqs = append(a.reqs, r)
	}
}

// between returns the requests received in [from, to].
func (a *auditLog) between(from, to time.Time) []request {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []request
	for _, r := range a.reqs {
		if !r.Received.Before(from) && !r.Received.After(to) {
			out = append(out, r)
		}
	}
	return out
}

// seen reports whether a request whose URI contains s has been logged.
func (a *auditLog) seen(s string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := len(a.reqs) - 1; i >= 0; i-- {
		if strings.Contains(a.reqs[i].URI, s) {
			return true
		}
	}
	return false
}

// Actors a request is counted under.
const (
	actorProject     = "inplace"
	actorKubelet     = "kubelet"
	actorScheduler   = "scheduler"
	actorControllers = "controllers"
	actorEvents      = "events"
	actorBench       = "bench"
	actorOther       = "other"
)

// actors in the order tables show them.
var actors = []string{actorProject, actorKubelet, actorScheduler, actorControllers, actorEvents}

// benchUserAgent marks the benchmark's own requests (setup, fences, floor
// runs), which are never counted as anyone's work.
const benchUserAgent = "inplace-bench"

// actorOf says whose request r is: an Event is counted as Events whoever
// writes it; then by user agent (this project's client says "inplace", the
// simulated kubelet "inplace-simulated-kubelet", a hollow node
// "hollow-kubelet/<node>", kube-scheduler "kube-scheduler/…"; a binding is
// the scheduler's, the simulated nodes' stand-in included) and by user
// (the controller-manager's controllers run as kube-system service
// accounts).
func actorOf(r request) string {
	ua := r.UserAgent
	switch {
	case r.Resource == "events":
		return actorEvents
	case ua == benchUserAgent:
		return actorBench
	case r.Resource == "pods" && r.Subresource == "binding":
		return actorScheduler
	case ua == "inplace" || strings.HasPrefix(ua, "inplace/"):
		return actorProject
	case ua == "inplace-simulated-kubelet" || strings.HasPrefix(ua, "hollow-kubelet/") || strings.HasPrefix(r.User, "system:node:"):
		return actorKubelet
	case strings.HasPrefix(ua, "kube-scheduler/") || r.User == "system:kube-scheduler":
		return actorScheduler
	case strings.HasPrefix(r.User, "system:serviceaccount:kube-system:") || r.User == "system:kube-controller-manager":
		return actorControllers
	}
	return actorOther
}

// isWrite reports a mutating verb.
func isWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}
