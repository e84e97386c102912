package main

import (
	"os"
	"path/filepath"
	"slices"
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
			Build       any               `yaml:"build"`
			PullPolicy  string            `yaml:"pull_policy"`
			Ports       []string          `yaml:"ports"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatalf("docker-compose.yaml: %v", err)
	}
	known := map[string]bool{}
	for _, s := range settings {
		known[s.env] = true
	}
	var urls, volumes, images []string
	builds := 0
	for name, svc := range f.Services {
		if !strings.HasPrefix(name, "agentbot") {
			continue
		}
		// One build, one image name: the other replicas run that image
		// and never pull it (or Compose builds or pulls it again).
		images = append(images, svc.Image)
		if svc.Build != nil {
			builds++
		} else if svc.PullPolicy != "never" {
			t.Errorf("%s neither builds the image nor has pull_policy: never", name)
		}
		// /metrics is published on this host only.
		for _, p := range svc.Ports {
			if !strings.HasPrefix(p, "127.0.0.1:") {
				t.Errorf("%s publishes %q on every interface; want 127.0.0.1:HOST:CONTAINER", name, p)
			}
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
	if builds != 1 || images[0] == "" || images[0] != images[1] {
		t.Fatalf("want one build of one named image for both replicas: %d builds, images %q", builds, images)
	}
	if volumes[0] == volumes[1] {
		t.Fatalf("the replicas share a data volume %q; each needs its own", volumes[0])
	}
	if img := f.Services["postgres"].Image; !strings.HasPrefix(img, "postgres:") {
		t.Fatalf("no PostgreSQL service (image %q)", img)
	}
}

// The env files the compose and docker comments have people write
// (agentbot.env, .env) hold tokens: git ignores them and the image build
// never copies them (COPY . .), at the root and below.
func TestEnvFilesIgnored(t *testing.T) {
	for file, want := range map[string][]string{
		".gitignore":    {".env*", "*.env"},
		".dockerignore": {".env*", "*.env", "**/.env*", "**/*.env"},
	} {
		b, err := os.ReadFile(filepath.Join("..", "..", file))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for _, w := range want {
			if !slices.Contains(lines, w) {
				t.Errorf("%s lacks the line %q", file, w)
			}
		}
	}
}
