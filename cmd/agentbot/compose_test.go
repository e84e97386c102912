package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// docker-compose.yaml runs PostgreSQL and two replicas that share it: every
// agentbot setting it names exists, both replicas get the same database
// URL, and each has its own data volume.
func TestComposeFileReplicas(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docker-compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Services map[string]struct {
			Environment map[string]string `yaml:"environment"`
			Volumes     []string          `yaml:"volumes"`
			Image       string            `yaml:"image"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatalf("docker-compose.yaml: %v", err)
	}
	known := map[string]bool{}
	for _, s := range settings {
		known[s.env] = true
	}
	var urls, volumes []string
	for name, svc := range f.Services {
		if !strings.HasPrefix(name, "agentbot") {
			continue
		}
		for k := range svc.Environment {
			if strings.HasPrefix(k, "AGENTBOT_") && !known[k] {
				t.Errorf("%s sets %s, which is no agentbot setting", name, k)
			}
		}
		urls = append(urls, svc.Environment["AGENTBOT_DATABASE_URL"])
		volumes = append(volumes, strings.Join(svc.Volumes, ","))
	}
	if len(urls) != 2 || urls[0] == "" || urls[0] != urls[1] {
		t.Fatalf("want two replicas on one database URL, got %q", urls)
	}
	if volumes[0] == volumes[1] {
		t.Fatalf("the replicas share a data volume %q; each needs its own", volumes[0])
	}
	if img := f.Services["postgres"].Image; !strings.HasPrefix(img, "postgres:") {
		t.Fatalf("no PostgreSQL service (image %q)", img)
	}
}
