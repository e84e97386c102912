package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// defaultHealthTimeout bounds agentbot health's request; /healthz itself
// answers within metrics.HealthTimeout (5s).
const defaultHealthTimeout = 8 * time.Second

// runHealth asks a running serve's /healthz, at --url or else at the
// address of AGENTBOT_HTTP_ADDR, and exits 0 when it answers 200, 1
// otherwise, with one line saying why. It is the image's HEALTHCHECK
// (distroless has no curl). Docker reserves exit code 2, so every failure,
// a bad flag too, exits 1.
func runHealth(ctx context.Context, e *env) int {
	timeout := defaultHealthTimeout
	var url string
	cfg, args, code := parse("health", e, func(fs *flagSet) {
		fs.StringVar(&url, "url", "", "the /healthz URL to ask (default: /healthz at --http-addr, its host made 127.0.0.1 when empty or 0.0.0.0)")
		fs.DurationVar(&timeout, "timeout", defaultHealthTimeout, "how long to wait for the answer")
	})
	if cfg == nil {
		return min(code, 1)
	}
	if len(args) > 0 {
		fmt.Fprintln(e.stderr, "usage: agentbot health [--url URL] [--timeout DURATION]")
		return 1
	}
	if url == "" {
		if cfg.HTTPAddr == "" {
			fmt.Fprintln(e.stderr, "agentbot health: AGENTBOT_HTTP_ADDR is not set, so serve has no /healthz to ask: set it as serve has it (the Docker image sets 127.0.0.1:8080), or give --url")
			return 1
		}
		u, err := healthURL(cfg.HTTPAddr)
		if err != nil {
			fmt.Fprintf(e.stderr, "agentbot health: %v\n", err)
			return 1
		}
		url = u
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot health: --url %q: %v\n", url, err)
		return 1
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot health: unhealthy: no answer from %s: %v (is agentbot serve running, with AGENTBOT_HTTP_ADDR set?)\n", url, err)
		return 1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	why := strings.Join(strings.Fields(string(body)), " ")
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(e.stderr, "agentbot health: unhealthy: %s answered %d: %s\n", url, resp.StatusCode, why)
		return 1
	}
	fmt.Fprintf(e.stdout, "healthy: %s answered 200 %s\n", url, why)
	return 0
}

// healthURL is the /healthz URL of a serve listening on addr (host:port):
// an empty or unspecified host (":8080", "0.0.0.0:8080", "[::]:8080") is
// reached on the loopback address.
func healthURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("AGENTBOT_HTTP_ADDR=%q: want host:port, such as 127.0.0.1:8080 or :8080", addr)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz", nil
}
