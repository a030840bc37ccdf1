package compose_test

import (
	"bytes"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/signoff-dev/signoff/internal/escalator"
)

// composeTools are the compose commands on this machine: docker compose
// (v2) and docker-compose (v1); the file must work with both. None fails
// the test: a skipped check would pass CI without checking the file.
func composeTools(t *testing.T) [][]string {
	t.Helper()
	var tools [][]string
	if exec.Command("docker", "compose", "version").Run() == nil {
		tools = append(tools, []string{"docker", "compose"})
	}
	if p, err := exec.LookPath("docker-compose"); err == nil {
		tools = append(tools, []string{p})
	}
	if len(tools) == 0 {
		t.Fatal("neither docker compose nor docker-compose is installed: install one (make test's integration tests need it too)")
	}
	return tools
}

// resolved runs `config` with env and returns each service's environment.
func resolved(t *testing.T, tool []string, env ...string) map[string]map[string]string {
	t.Helper()
	args := append(append([]string{}, tool[1:]...), "-f", "docker-compose.yml", "config")
	cmd := exec.Command(tool[0], args...)
	// Only what the test sets: the caller's SIGNOFF_COMPOSE_* must not
	// change the defaults checked here.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SIGNOFF_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s config: %v\n%s", strings.Join(tool, " "), err, stderr.String())
	}
	var file struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Environment map[string]string `yaml:"environment"`
			Ports       []any             `yaml:"ports"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(out, &file); err != nil {
		t.Fatalf("%s config printed what is not YAML: %v\n%s", strings.Join(tool, " "), err, out)
	}
	envs := map[string]map[string]string{}
	for name, s := range file.Services {
		envs[name] = s.Environment
		if envs[name] == nil {
			envs[name] = map[string]string{}
		}
		envs[name]["image"] = s.Image
	}
	return envs
}

// Every broker links its pages to the web page as this machine's browser
// reaches it (the bot's published port), or to SIGNOFF_COMPOSE_WEB_URL.
func TestTheBrokersLinkPagesToTheWebPage(t *testing.T) {
	for _, tool := range composeTools(t) {
		t.Run(strings.Join(tool, " "), func(t *testing.T) {
			for _, tc := range []struct {
				env  []string
				want string
			}{
				{nil, "http://127.0.0.1:18090"},
				{[]string{"SIGNOFF_COMPOSE_WEB_URL=https://approvals.example.com"}, "https://approvals.example.com"},
			} {
				brokers := 0
				for name, env := range resolved(t, tool, tc.env...) {
					if !strings.HasPrefix(env["image"], "signoff/broker:") {
						continue
					}
					brokers++
					got := env["SIGNOFF_WEB_URL"]
					if got != tc.want {
						t.Errorf("%s (%v): SIGNOFF_WEB_URL %q, want %q", name, tc.env, got, tc.want)
						continue
					}
					if err := escalator.CheckWebURL(got); err != nil {
						t.Errorf("%s: %v", name, err)
					}
				}
				if brokers != 3 {
					t.Errorf("%d broker services, want 3", brokers)
				}
			}
		})
	}

	// The default is the port the bot publishes by default.
	data, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("http://127.0.0.1:18090")
	if !strings.Contains(string(data), `"127.0.0.1:${SIGNOFF_COMPOSE_WEB_PORT-`+u.Port()+`}:8090"`) {
		t.Errorf("the approver bot does not publish the web page on %s by default: SIGNOFF_WEB_URL's default is wrong", u.Port())
	}
}
