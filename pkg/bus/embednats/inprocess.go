package embednats

import (
	"net"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// inProcess gives the client library connections to the server that stay
// in the process (a pipe to the server's client handler, no socket), with
// the client's writes buffered as a socket's would be.
type inProcess struct{ ns *server.Server }

// InProcessConn is a new connection to the server (nats.InProcessConnProvider).
func (p inProcess) InProcessConn() (net.Conn, error) {
	c, err := p.ns.InProcessConn()
	if err != nil {
		return nil, err
	}
	return newBuffered(c), nil
}

// maxPending is how much a buffered connection holds before a write waits
// for the server to read.
const maxPending = 1 << 20

// closeWait bounds how long Close waits to hand the server what the client
// wrote before it.
const closeWait = time.Second

// buffered is a connection whose writes return once queued, and one
// goroutine hands them to the pipe in order. A bare pipe's write waits for
// the server to read, and the server does not read while it writes an
// error and closes: a refused CONNECT is answered with -ERR 'Authorization
// Violation' while the client is still sending the PING behind it, and
// each side would wait for the other until the server's write deadline,
// the client left with "closed pipe" instead of the server's answer.
type buffered struct {
	net.Conn
	mu      sync.Mutex
	changed sync.Cond // pending grew or shrank, or err was set
	pending []byte
	spare   []byte
	writing bool  // the pump is writing to the pipe
	err     error // the pipe's write error, or net.ErrClosed after Close
}

func newBuffered(c net.Conn) *buffered {
	b := &buffered{Conn: c}
	b.changed.L = &b.mu
	go b.pump()
	return b
}

// Write queues p; it waits only while maxPending bytes are queued.
func (b *buffered) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.err == nil && len(b.pending) >= maxPending {
		b.changed.Wait()
	}
	if b.err != nil {
		return 0, b.err
	}
	b.pending = append(b.pending, p...)
	b.changed.Broadcast()
	return len(p), nil
}

// pump writes what is queued to the pipe until a write fails or Close.
func (b *buffered) pump() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		for b.err == nil && len(b.pending) == 0 {
			b.changed.Wait()
		}
		if len(b.pending) == 0 {
			return
		}
		out := b.pending
		b.pending, b.writing = b.spare[:0], true
		b.mu.Unlock()
		_, err := b.Conn.Write(out)
		b.mu.Lock()
		b.spare, b.writing = out[:0], false
		if err != nil {
			b.pending = b.pending[:0]
			if b.err == nil || b.err == net.ErrClosed {
				b.err = err
			}
		}
		b.changed.Broadcast()
		if b.err != nil && len(b.pending) == 0 {
			return
		}
	}
}

// Close hands the server what is queued (waiting at most closeWait) and
// closes the pipe.
func (b *buffered) Close() error {
	b.mu.Lock()
	if b.err == nil {
		b.err = net.ErrClosed
	}
	b.changed.Broadcast()
	if len(b.pending) > 0 || b.writing {
		_ = b.Conn.SetWriteDeadline(time.Now().Add(closeWait))
		for len(b.pending) > 0 || b.writing {
			b.changed.Wait()
		}
	}
	b.mu.Unlock()
	return b.Conn.Close()
}
