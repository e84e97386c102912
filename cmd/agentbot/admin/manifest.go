package admin

import (
	"fmt"
	"io"
	"strings"

	"agentbot"
	"agentbot/cmd/agentbot/check"
)

// ManifestSynopsis is the synopsis of agentbot manifest.
const ManifestSynopsis = "[--mode socket|http]"

// Manifest prints the Slack app manifest of mode: socket is
// manifest.yaml; http is manifest.http.yaml with its request and redirect
// URLs under publicURL (AGENTBOT_PUBLIC_URL), which it needs. It returns
// the exit code.
func Manifest(w, stderr io.Writer, mode, publicURL string) int {
	switch mode {
	case "socket", "":
		fmt.Fprint(w, agentbot.SocketManifest)
		return 0
	case "http":
	default:
		fmt.Fprintf(stderr, "agentbot manifest: --mode is socket or http, not %q\n", mode)
		return 2
	}
	if publicURL == "" || !check.PublicURLOK(publicURL) {
		fmt.Fprintf(stderr, "agentbot manifest: --mode http needs the https address Slack reaches agentbot at: set --public-url or AGENTBOT_PUBLIC_URL (now %q)\n", publicURL)
		return 2
	}
	fmt.Fprint(w, strings.ReplaceAll(agentbot.HTTPManifest, agentbot.ManifestExampleURL, strings.TrimRight(publicURL, "/")))
	return 0
}
