package realnode

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
)

// forward accepts TCP connections on the host bridge and relays them to
// a loopback address: the nodes' containerd pulls from the test registry
// (127.0.0.1 on the host) through it. It listens on the same port at the
// host address.
type forward struct {
	ln    net.Listener
	to    string
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func startForward(ctx context.Context, hostIP, to string) (*forward, error) {
	_, port, err := net.SplitHostPort(to)
	if err != nil {
		return nil, fmt.Errorf("forward %s: %w", to, err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(hostIP, port))
	if err != nil {
		return nil, fmt.Errorf("forward %s: %w", to, err)
	}
	f := &forward{ln: ln, to: to, conns: map[net.Conn]struct{}{}}
	f.wg.Add(1)
	go f.serve()
	return f, nil
}

// Addr is the host:port the forward listens on.
func (f *forward) Addr() string { return f.ln.Addr().String() }

func (f *forward) serve() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.wg.Add(1)
		go f.relay(c)
	}
}

func (f *forward) relay(c net.Conn) {
	defer f.wg.Done()
	up, err := net.Dial("tcp", f.to)
	if err != nil {
		c.Close()
		return
	}
	if !f.track(c, up) {
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	<-done
	f.untrack(c, up)
}

func (f *forward) track(cs ...net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conns == nil {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		f.conns[c] = struct{}{}
	}
	return true
}

func (f *forward) untrack(cs ...net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range cs {
		c.Close()
		delete(f.conns, c)
	}
}

// Close stops accepting, closes the open connections and waits for the
// relays to end.
func (f *forward) Close() {
	f.ln.Close()
	f.mu.Lock()
	for c := range f.conns {
		c.Close()
	}
	f.conns = nil
	f.mu.Unlock()
	f.wg.Wait()
}
