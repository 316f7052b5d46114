package embednats

import (
	"bytes"
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// BenchmarkTransport compares a connection over loopback TCP (what another
// process has) with the in-process one Connect makes: a publish to a
// file-backed stream waiting for its ack, and a request answered by a
// second connection of the same kind. cpu-ns/op is the process's CPU
// (user+system, client and server together) per operation, what a replica
// running the embedded server pays.
func BenchmarkTransport(b *testing.B) {
	s, err := Start(Options{DataDir: b.TempDir(), Port: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Shutdown)
	transports := []struct {
		name string
		dial func(b *testing.B) *nats.Conn
	}{
		{"tcp", func(b *testing.B) *nats.Conn { return benchConn(b)(nats.Connect(s.URL())) }},
		{"in-process", func(b *testing.B) *nats.Conn { return benchConn(b)(s.Connect(b.Name())) }},
	}
	payload := bytes.Repeat([]byte("x"), 700) // about a pod's event
	for _, tr := range transports {
		b.Run(tr.name+"/publish-ack", func(b *testing.B) {
			nc := tr.dial(b)
			js, err := jetstream.New(nc)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: "B", Subjects: []string{"b.>"}}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				if _, err := js.Publish(ctx, "b.event", payload); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report(b)
		})
		b.Run(tr.name+"/request-reply", func(b *testing.B) {
			server, client := tr.dial(b), tr.dial(b)
			if _, err := server.Subscribe("svc", func(m *nats.Msg) { _ = m.Respond(payload) }); err != nil {
				b.Fatal(err)
			}
			if err := server.Flush(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				if _, err := client.Request("svc", payload, 5*time.Second); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report(b)
		})
	}
}

func benchConn(b *testing.B) func(*nats.Conn, error) *nats.Conn {
	return func(nc *nats.Conn, err error) *nats.Conn {
		b.Helper()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(nc.Close)
		return nc
	}
}

// cpuClock is the process's CPU time at a start.
type cpuClock time.Duration

func startCPU() cpuClock { return cpuClock(processCPU()) }

// report adds the process's CPU per operation since c.
func (c cpuClock) report(b *testing.B) {
	b.ReportMetric(float64(processCPU()-time.Duration(c))/float64(b.N), "cpu-ns/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
