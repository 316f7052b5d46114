package signtest

import "net/url"

func parseURL(s string) ([]*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	return []*url.URL{u}, nil
}
