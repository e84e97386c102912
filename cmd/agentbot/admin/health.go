package admin

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// DefaultHealthTimeout bounds agentbot health's request; /healthz itself
// answers within metrics.HealthTimeout (5s).
const DefaultHealthTimeout = 8 * time.Second

// Health is agentbot health: its flags, the setting it reads and where it
// writes.
type Health struct {
	Stdout, Stderr io.Writer
	// URL is the /healthz URL to ask ("": /healthz at HTTPAddr).
	URL string
	// HTTPAddr is serve's AGENTBOT_HTTP_ADDR.
	HTTPAddr string
	// Timeout is how long to wait for the answer.
	Timeout time.Duration
}

// Run asks a running serve's /healthz, at URL or else at the address of
// HTTPAddr, and returns 0 when it answers 200, 1 otherwise, with one line
// saying why; args must be empty. It is the image's HEALTHCHECK (distroless
// has no curl). Docker reserves exit code 2, so every failure exits 1.
func (o *Health) Run(ctx context.Context, args []string) int {
	url := o.URL
	if len(args) > 0 {
		fmt.Fprintln(o.Stderr, "usage: agentbot health [--url URL] [--timeout DURATION]")
		return 1
	}
	if url == "" {
		if o.HTTPAddr == "" {
			fmt.Fprintln(o.Stderr, "agentbot health: AGENTBOT_HTTP_ADDR is not set, so serve has no /healthz to ask: set it as serve has it (the Docker image sets 127.0.0.1:8080), or give --url")
			return 1
		}
		u, err := HealthURL(o.HTTPAddr)
		if err != nil {
			fmt.Fprintf(o.Stderr, "agentbot health: %v\n", err)
			return 1
		}
		url = u
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentbot health: --url %q: %v\n", url, err)
		return 1
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentbot health: unhealthy: no answer from %s: %v (is agentbot serve running, with AGENTBOT_HTTP_ADDR set?)\n", url, err)
		return 1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	why := strings.Join(strings.Fields(string(body)), " ")
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(o.Stderr, "agentbot health: unhealthy: %s answered %d: %s\n", url, resp.StatusCode, why)
		return 1
	}
	fmt.Fprintf(o.Stdout, "healthy: %s answered 200 %s\n", url, why)
	return 0
}

// HealthURL is the /healthz URL of a serve listening on addr (host:port):
// an empty or unspecified host (":8080", "0.0.0.0:8080", "[::]:8080") is
// reached on the loopback address.
func HealthURL(addr string) (string, error) {
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
