package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// keyPair is a certificate and its private key, PEM-encoded.
type keyPair struct {
	cert, key []byte
	parsed    *x509.Certificate
	signer    *ecdsa.PrivateKey
}

// pki is the cluster's certificate authority and the files made from it.
type pki struct {
	ca         keyPair
	caFile     string
	servingCrt string
	servingKey string
	saKey      string // EC private key signing service-account tokens
	saPub      string // its public key, verifying them
}

// newPKI writes a CA, the API server's serving certificate (valid for
// host too) and the service-account signing key into dir.
func newPKI(dir, host string) (*pki, error) {
	ca, err := newCA()
	if err != nil {
		return nil, err
	}
	p := &pki{ca: ca, caFile: filepath.Join(dir, "ca.crt")}
	if err := os.WriteFile(p.caFile, ca.cert, 0o600); err != nil {
		return nil, fmt.Errorf("write ca: %w", err)
	}
	serving, err := ca.issue(servingTemplate(host))
	if err != nil {
		return nil, err
	}
	p.servingCrt, p.servingKey = filepath.Join(dir, "apiserver.crt"), filepath.Join(dir, "apiserver.key")
	if err := writePair(serving, p.servingCrt, p.servingKey); err != nil {
		return nil, err
	}
	p.saKey, p.saPub = filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub")
	if err := writeSAKey(p.saKey, p.saPub); err != nil {
		return nil, err
	}
	return p, nil
}

// clientCert issues a client certificate for user in groups.
func (p *pki) clientCert(user string, groups ...string) (keyPair, error) {
	return p.ca.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

func newCA() (keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, fmt.Errorf("generate ca key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "inplace-test-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return keyPair{}, fmt.Errorf("self-sign ca: %w", err)
	}
	return pairOf(der, key)
}

// issue signs tmpl (serial and validity filled in) with the CA.
func (ca keyPair) issue(tmpl *x509.Certificate) (keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, fmt.Errorf("generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return keyPair{}, fmt.Errorf("serial: %w", err)
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(10 * 365 * 24 * time.Hour)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.parsed, &key.PublicKey, ca.signer)
	if err != nil {
		return keyPair{}, fmt.Errorf("sign %q: %w", tmpl.Subject.CommonName, err)
	}
	return pairOf(der, key)
}

func pairOf(der []byte, key *ecdsa.PrivateKey) (keyPair, error) {
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		return keyPair{}, fmt.Errorf("parse certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return keyPair{}, fmt.Errorf("marshal key: %w", err)
	}
	return keyPair{
		cert:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		key:    pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		parsed: parsed,
		signer: key,
	}, nil
}

func servingTemplate(host string) *x509.Certificate {
	ips := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv4(10, 0, 0, 1)}
	if ip := net.ParseIP(host); ip != nil && !ip.IsLoopback() {
		ips = append(ips, ip)
	}
	return &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: ips,
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default",
			"kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
	}
}

func writePair(kp keyPair, certFile, keyFile string) error {
	if err := os.WriteFile(certFile, kp.cert, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", certFile, err)
	}
	if err := os.WriteFile(keyFile, kp.key, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", keyFile, err)
	}
	return nil
}

// writeSAKey writes a fresh EC P-256 key and its public half.
func writeSAKey(keyFile, pubFile string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate service-account key: %w", err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("marshal service-account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return fmt.Errorf("marshal service-account public key: %w", err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("write service-account key: %w", err)
	}
	if err := os.WriteFile(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600); err != nil {
		return fmt.Errorf("write service-account public key: %w", err)
	}
	return nil
}

// ServiceAccountSigningKey is the PEM file of the key the API server signs
// service-account tokens with: a test forges with it a token the cluster
// would have issued but cannot ask for (one already expired).
func (c *Cluster) ServiceAccountSigningKey() string { return c.pki.saKey }
