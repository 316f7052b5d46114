package registry

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/inplace-dev/inplace/events"
)

// Every format refuses a push whose digest is malformed (another
// algorithm, a wrong length, not hex), naming the payload field (the digest
// field, or the reference that holds it), instead of reporting the push
// without its digest: each golden case that yields a push with a digest is
// parsed again with that digest spoiled.
func TestMalformedDigestIsRefused(t *testing.T) {
	bad := map[string]func(d string) string{
		"md5":       func(string) string { return "md5:abcd" },
		"short":     func(d string) string { return d[:len(d)-1] },
		"long":      func(d string) string { return d + "0" },
		"not hex":   func(d string) string { return d[:len(d)-1] + "g" },
		"uppercase": func(d string) string { return strings.ToUpper(d) },
	}
	tried := map[Format]bool{}
	for _, f := range Formats() {
		for _, c := range goldenCases(t, f) {
			d := c.delivery(t)
			r, err := Parse(f, d)
			if err != nil || len(r.Pushes) == 0 || r.Pushes[0].Digest == "" {
				continue
			}
			digest := r.Pushes[0].Digest
			for name, spoil := range bad {
				t.Run(string(f)+"/"+c.name+"/"+name, func(t *testing.T) {
					spoiled := d
					spoiled.Body = spoilBody(t, d.Body, digest, spoil)
					_, err := Parse(f, spoiled)
					var fe *events.FieldError
					if !errors.As(err, &fe) {
						t.Fatalf("Parse = %v; want a FieldError refusing the digest", err)
					}
					tried[f] = true
				})
			}
		}
	}
	for _, f := range Formats() {
		if f != DockerHub && f != Quay && f != Gitea && !tried[f] {
			t.Errorf("format %s: no golden case with a digest to spoil", f)
		}
	}
}

// spoilBody replaces digest in body: as written ("sha256:<hex>"), as its
// hex alone (jfrog's data.sha256, a CDEvents purl's sha256%3A<hex>), or
// inside a base64 Pub/Sub message (gar).
func spoilBody(t *testing.T, body []byte, digest string, spoil func(string) string) []byte {
	t.Helper()
	h := strings.TrimPrefix(digest, "sha256:")
	switch {
	case bytes.Contains(body, []byte(digest)):
		return bytes.ReplaceAll(body, []byte(digest), []byte(spoil(digest)))
	case bytes.Contains(body, []byte(h)):
		return bytes.ReplaceAll(body, []byte(h), []byte(strings.TrimPrefix(spoil(digest), "sha256:")))
	}
	for _, field := range bytes.Split(body, []byte(`"`)) {
		raw, err := base64.StdEncoding.DecodeString(string(field))
		if err != nil || !bytes.Contains(raw, []byte(digest)) {
			continue
		}
		enc := base64.StdEncoding.EncodeToString(bytes.ReplaceAll(raw, []byte(digest), []byte(spoil(digest))))
		return bytes.ReplaceAll(body, field, []byte(enc))
	}
	t.Fatalf("the digest %s is not in the body", digest)
	return nil
}
