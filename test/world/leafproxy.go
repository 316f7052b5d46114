package world

import (
	"io"
	"net"
	"sync"
)

// LeafProxy carries one member's leaf connection to the hub, so a test can
// cut it (a partition: the member's NATS keeps running, the hub too) and
// heal it.
type LeafProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
}

// NewLeafProxy listens on loopback and carries what it accepts to target
// (host:port, the hub's leaf port).
func NewLeafProxy(target string) (*LeafProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &LeafProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	return p, nil
}

// URL is where the member dials its hub.
func (p *LeafProxy) URL() string { return "nats-leaf://" + p.ln.Addr().String() }

func (p *LeafProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.carry(c)
	}
}

func (p *LeafProxy) carry(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, up) {
		c.Close()
		up.Close()
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) { _, _ = io.Copy(dst, src); done <- struct{}{} }
	go pipe(up, c)
	go pipe(c, up)
	<-done
	c.Close()
	up.Close()
	p.untrack(c, up)
}

func (p *LeafProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *LeafProxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
}

// SetCut cuts (closing what it carries and refusing new connections) or
// heals the link.
func (p *LeafProxy) SetCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			c.Close()
		}
	}
}

// Close cuts the link for good and stops listening.
func (p *LeafProxy) Close() {
	p.SetCut(true)
	p.ln.Close()
}

// IsCut says whether the link is cut.
func (p *LeafProxy) IsCut() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cut
}
