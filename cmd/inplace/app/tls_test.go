package app_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/inplace-dev/inplace/cmd/inplace/app"
	"github.com/inplace-dev/inplace/pkg/bus/busauth"
)

// TestEmbeddedNATSOverTLS: with --nats-tls-cert/--nats-tls-key the embedded
// server takes TLS connections only, from its identities only; the process
// itself connects in process, where nothing is on the wire.
func TestEmbeddedNATSOverTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	p := receiverProcess(t)
	p.NATSTLSCert, p.NATSTLSKey = cert, key
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rr, err := app.Start(ctx, p, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if nc, err := nats.Connect(rr.NATSURL, nats.Timeout(2*time.Second)); err == nil {
		nc.Close()
		t.Error("a plain connection without credentials was taken")
	}
	own, err := busauth.Dial(rr.Credentials, busauth.Operator)
	if err != nil {
		t.Fatal(err)
	}
	if nc, err := nats.Connect(rr.NATSURL, append(own, nats.Timeout(2*time.Second))...); err == nil {
		nc.Close()
		t.Error("the operator connected without TLS")
	}
	nc, err := nats.Connect(rr.NATSURL, append(own, nats.RootCAs(cert))...)
	if err != nil {
		t.Fatalf("the operator over TLS: %v", err)
	}
	if !nc.TLSRequired() {
		t.Error("the server does not require TLS")
	}
	nc.Close()
	if own := rr.Bus.JetStream().Conn(); own.ConnectedAddr() != "pipe" {
		t.Errorf("the process is connected to its server at %s, want in process", own.ConnectedAddr())
	}
	cancel()
	if err := rr.Wait(); err != nil {
		t.Error(err)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "nats"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
