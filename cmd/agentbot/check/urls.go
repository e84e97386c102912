package check

import (
	"net"
	"net/url"
	"strings"
)

// PublicURLOK reports whether a public URL is empty, or an https URL with
// a host and no query, fragment or user (http is allowed on a loopback
// host, for a test).
func PublicURLOK(v string) bool {
	if v == "" {
		return true
	}
	u, err := url.Parse(v)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return false
	}
	switch h := u.Hostname(); {
	case u.Scheme == "https":
		return true
	case u.Scheme == "http":
		ip := net.ParseIP(h)
		return h == "localhost" || ip != nil && ip.IsLoopback()
	}
	return false
}

// BaseURLOK reports whether a base URL is empty (OpenAI's) or an http or
// https URL with a host: "localhost:11434/v1" without its scheme is not.
func BaseURLOK(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" {
		return true
	}
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
