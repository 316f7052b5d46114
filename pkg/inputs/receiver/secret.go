package receiver

import (
	"fmt"
	"os"
	"strings"
)

// Secret is given exactly one way: inline, from a file (a Kubernetes Secret
// mounted as files: the production path), or from an environment variable.
type Secret struct {
	Value string `json:"value,omitempty"`
	File  string `json:"file,omitempty"`
	Env   string `json:"env,omitempty"`
}

func (s *Secret) validate(k string) error {
	if s == nil {
		return keyErr(k, "required")
	}
	n := 0
	for _, v := range []string{s.Value, s.File, s.Env} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		return keyErr(k, "give exactly one of value, file, env")
	}
	return nil
}

// resolve reads the secret. A file's trailing newline is not part of it.
func (s *Secret) resolve(k string) ([]byte, error) {
	var v string
	switch {
	case s.File != "":
		b, err := os.ReadFile(s.File)
		if err != nil {
			return nil, keyErr(k+".file", fmt.Sprintf("cannot read: %v", err))
		}
		v = strings.TrimRight(string(b), "\r\n")
	case s.Env != "":
		v = os.Getenv(s.Env)
	default:
		v = s.Value
	}
	if v == "" {
		return nil, keyErr(k, "resolves to an empty secret")
	}
	return []byte(v), nil
}
