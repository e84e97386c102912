// Package agentbot holds the Slack app manifests at the repository's
// root, for agentbot manifest: manifest.yaml (Socket Mode, one
// workspace) and manifest.http.yaml (the Events API at a request URL,
// distributable and installable org-wide).
package agentbot

import _ "embed"

// SocketManifest is manifest.yaml.
//
//go:embed manifest.yaml
var SocketManifest string

// HTTPManifest is manifest.http.yaml; its URLs name ManifestExampleURL.
//
//go:embed manifest.http.yaml
var HTTPManifest string

// ManifestExampleURL is the public URL HTTPManifest's URLs name until
// agentbot manifest fills in the real one.
const ManifestExampleURL = "https://agentbot.example.com"
