package rollout

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// errIndex: the record is not laid out as index reads it (not an object,
// an odd "pods" member): the caller decodes it whole instead.
var errIndex = errors.New("rollout: record not indexable")

// index splits a record into its top level, with the pods member's value
// replaced by null, and each pod's entry as it is in raw (subslices of
// raw, not decoded, not copied). It only walks the structure: a value it
// does not look into is checked when decoded (the top level by its
// decode, a pod's entry when asked for). Anything else than one object
// with at most one member named pods (in any case, as encoding/json
// matches it) whose value is an object or null is errIndex.
func index(raw []byte) (top []byte, pods map[string][]byte, err error) {
	s := scan{b: raw}
	if !s.byte('{') {
		return nil, nil, errIndex
	}
	start, end, seen := -1, -1, false
	for !s.byte('}') {
		if seen && !s.byte(',') {
			return nil, nil, errIndex
		}
		seen = true
		key, ok := s.key()
		if !ok {
			return nil, nil, errIndex
		}
		vs := s.skipSpace()
		if !strings.EqualFold(key, "pods") {
			if !s.value() {
				return nil, nil, errIndex
			}
			continue
		}
		if start >= 0 || key != "pods" {
			return nil, nil, errIndex
		}
		if pods, ok = s.members(); !ok {
			return nil, nil, errIndex
		}
		start, end = vs, s.i
	}
	if s.skipSpace() != len(raw) {
		return nil, nil, errIndex
	}
	if start < 0 {
		return raw, nil, nil
	}
	top = make([]byte, 0, len(raw)-(end-start)+4)
	top = append(append(append(top, raw[:start]...), "null"...), raw[end:]...)
	return top, pods, nil
}

// scan walks JSON text from i.
type scan struct {
	b []byte
	i int
}

func (s *scan) skipSpace() int {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
	return s.i
}

// byte consumes c after white space, if it is next.
func (s *scan) byte(c byte) bool {
	if s.skipSpace() < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// members reads an object's members (null: none) by key, each value as
// it is in the text.
func (s *scan) members() (map[string][]byte, bool) {
	if s.literal("null") {
		return nil, true
	}
	if !s.byte('{') {
		return nil, false
	}
	out := map[string][]byte{}
	for first := true; !s.byte('}'); first = false {
		if !first && !s.byte(',') {
			return nil, false
		}
		key, ok := s.key()
		if !ok {
			return nil, false
		}
		vs := s.skipSpace()
		if !s.value() {
			return nil, false
		}
		out[key] = s.b[vs:s.i]
	}
	return out, true
}

// key reads a member's name and the colon after it.
func (s *scan) key() (string, bool) {
	ks := s.skipSpace()
	if !s.str() {
		return "", false
	}
	k := s.b[ks:s.i]
	if !s.byte(':') {
		return "", false
	}
	if bytes.IndexByte(k, '\\') < 0 {
		return string(k[1 : len(k)-1]), true
	}
	var out string
	err := json.Unmarshal(k, &out)
	return out, err == nil
}

func (s *scan) literal(lit string) bool {
	if s.skipSpace()+len(lit) <= len(s.b) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// str skips a string starting at i: to the first quote not escaped (an
// odd run of backslashes before it escapes it).
func (s *scan) str() bool {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return false
	}
	s.i++
	for {
		j := bytes.IndexByte(s.b[s.i:], '"')
		if j < 0 {
			return false
		}
		s.i += j + 1
		n := 0
		for k := s.i - 2; k >= 0 && s.b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return true
		}
	}
}

// value skips one value of any kind, its nesting by brackets.
func (s *scan) value() bool {
	depth := 0
	for s.skipSpace() < len(s.b) {
		switch c := s.b[s.i]; c {
		case '"':
			if !s.str() {
				return false
			}
		case '{', '[':
			depth++
			s.i++
		case '}', ']':
			if depth == 0 {
				return false
			}
			depth--
			s.i++
		case ',', ':':
			if depth == 0 {
				return false
			}
			s.i++
		default:
			s.scalar()
		}
		if depth == 0 {
			return true
		}
	}
	return false
}

// scalar skips a number, true, false or null.
func (s *scan) scalar() {
	start := s.i
	for s.i < len(s.b) && !strings.ContainsRune(",:{}[]\" \t\n\r", rune(s.b[s.i])) {
		s.i++
	}
	if s.i == start {
		s.i++ // not JSON; the decode of the value refuses it
	}
}
