package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"mime"
	"net/url"
	"strings"
	"time"
)

// decode unmarshals body into v, naming the field when a value has the
// wrong JSON type. prefix is the path of body within the delivery ("" for
// the whole body).
func decode(prefix string, body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return fieldErr(orBody(prefix), "empty; a JSON object is required")
	}
	if err := json.Unmarshal(body, v); err != nil {
		return decodeErr(prefix, err)
	}
	return nil
}

func decodeErr(prefix string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return fieldErr(orBody(prefix), "a JSON object is required, not a JSON "+te.Value)
		}
		return fieldErr(join(prefix, te.Field), "cannot hold a JSON "+te.Value)
	}
	return fieldErr(orBody(prefix), "invalid JSON: "+err.Error())
}

func orBody(prefix string) string {
	if prefix == "" {
		return "body"
	}
	return prefix
}

func join(prefix, field string) string {
	if prefix == "" {
		return field
	}
	return prefix + "." + field
}

// formPayload returns the JSON of a form-encoded delivery (GitHub and Gitea
// can send `payload=<json>` as application/x-www-form-urlencoded), or body.
func formPayload(contentType string, body []byte) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return body, nil
	}
	v, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, fieldErr("body", "invalid form encoding: "+err.Error())
	}
	p := v.Get("payload")
	if p == "" {
		return nil, fieldErr("payload", "required in a form-encoded delivery")
	}
	return []byte(p), nil
}

// unixTime reads seconds since the epoch, integer or fractional; anything
// out of range is "unknown".
func unixTime(n json.Number) time.Time {
	f, err := n.Float64()
	if err != nil || f <= 0 || f > 253402300799 || math.IsNaN(f) {
		return time.Time{}
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC()
}

// rfc3339 parses an RFC 3339 time. The push time is informative, so an
// empty or malformed one is "unknown" rather than a reason to refuse a push.
func rfc3339(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}
	}
	return t
}

// lower compares action names and types case-insensitively.
func lower(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
