package compose_test

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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

// composeFile is what the tests read of `config`'s output.
type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Environment map[string]string `yaml:"environment"`
		Ports       []any             `yaml:"ports"`
		Command     []string          `yaml:"command"`
		Volumes     []any             `yaml:"volumes"`
	} `yaml:"services"`
}

func parseConfig(t *testing.T, tool []string, out []byte) composeFile {
	t.Helper()
	var file composeFile
	if err := yaml.Unmarshal(out, &file); err != nil {
		t.Fatalf("%s config printed what is not YAML: %v\n%s", strings.Join(tool, " "), err, out)
	}
	return file
}

// testKeys makes the plane's keys as `make keys` does, in a directory of
// the test's (SIGNOFF_COMPOSE_KEYS), once per test binary.
var testKeys = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "signoff-compose-keys-")
	if err != nil {
		return "", err
	}
	madeKeys = dir
	cmd := exec.Command("go", "run", "../nats/genkeys", "-dir", dir, "-readable")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("genkeys: %v\n%s", err, out)
	}
	return dir, nil
})

// madeKeys is the directory testKeys made, if any.
var madeKeys string

// TestMain removes the test's keys.
func TestMain(m *testing.M) {
	code := m.Run()
	if madeKeys != "" {
		os.RemoveAll(madeKeys)
	}
	os.Exit(code)
}

func keysDir(t *testing.T) string {
	t.Helper()
	dir, err := testKeys()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// resolved runs `config` with env and returns each service's environment.
func resolved(t *testing.T, tool []string, env ...string) map[string]map[string]string {
	t.Helper()
	return envsOf(parseConfig(t, tool, config(t, tool, env...)))
}

// config runs `config` with env (and the test's keys) and returns its output.
func config(t *testing.T, tool []string, env ...string) []byte {
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
	cmd.Env = append(cmd.Env, "SIGNOFF_COMPOSE_KEYS="+keysDir(t))
	cmd.Env = append(cmd.Env, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s config: %v\n%s", strings.Join(tool, " "), err, stderr.String())
	}
	return out
}

func envsOf(file composeFile) map[string]map[string]string {
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

// Every client of the plane connects with a key of its own, and every NATS
// node knows the public keys of the users deploy/nats/accounts.conf
// defines: brokers as SIGNOFF's broker user with the tenants file, the
// approver bot as DEMO's approver.
func TestEveryServiceConnectsWithItsOwnKey(t *testing.T) {
	keys := keysDir(t)
	pub := func(name string) string {
		data, err := os.ReadFile(filepath.Join(keys, name+".pub"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(data))
	}
	mounts := func(vols []any) map[string]string {
		m := map[string]string{}
		for _, v := range vols {
			switch v := v.(type) {
			case string: // docker-compose 1: "src:dst:ro"
				parts := strings.Split(v, ":")
				if len(parts) >= 2 {
					m[parts[1]] = parts[0]
				}
			case map[string]any: // compose v2: {source, target}
				m[fmt.Sprint(v["target"])] = fmt.Sprint(v["source"])
			}
		}
		return m
	}
	for _, tool := range composeTools(t) {
		t.Run(strings.Join(tool, " "), func(t *testing.T) {
			file := parseConfig(t, tool, config(t, tool))
			var nodes, brokers int
			for name, s := range file.Services {
				m := mounts(s.Volumes)
				switch {
				case strings.HasPrefix(name, "nats-"):
					nodes++
					for _, user := range []string{"broker", "admin", "demo-agent", "demo-approver", "demo-admin"} {
						v := "SIGNOFF_NKEY_" + strings.ToUpper(strings.ReplaceAll(user, "-", "_"))
						if s.Environment[v] != pub(user) {
							t.Errorf("%s: %s = %q, want %s.pub", name, v, s.Environment[v], user)
						}
					}
					for _, f := range []string{"accounts.conf", "account-signoff.conf", "tenant-demo.conf"} {
						if m["/etc/nats/"+f] == "" {
							t.Errorf("%s does not mount deploy/nats/%s", name, f)
						}
					}
				case strings.HasPrefix(name, "broker-"):
					brokers++
					cmd := strings.Join(s.Command, " ")
					if !strings.Contains(cmd, "--nats-nkey=/etc/signoff/nats/broker.nk") || !strings.Contains(cmd, "--tenants=/etc/signoff/tenants.yaml") {
						t.Errorf("%s: command %q, want the broker's nkey and the tenants file", name, cmd)
					}
					if strings.Contains(cmd, "--insecure-nats") {
						t.Errorf("%s connects with --insecure-nats", name)
					}
					if m["/etc/signoff/nats/broker.nk"] != filepath.Join(keys, "broker.nk") || m["/etc/signoff/tenants.yaml"] != filepath.Join(keys, "tenants.yaml") {
						t.Errorf("%s mounts %v, want broker.nk and tenants.yaml of %s", name, m, keys)
					}
				case name == "approver-bot":
					if m["/etc/signoff/nats/approver.nk"] != filepath.Join(keys, "demo-approver.nk") {
						t.Errorf("approver-bot mounts %v, want demo-approver.nk as its seed", m)
					}
				}
			}
			if nodes != 3 || brokers != 3 {
				t.Errorf("%d NATS nodes and %d brokers, want 3 and 3", nodes, brokers)
			}
		})
	}
	bot, err := os.ReadFile("approver-bot.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		NATS struct {
			NKeySeed    string `yaml:"nkey_seed"`
			InboxPrefix string `yaml:"inbox_prefix"`
			Insecure    bool   `yaml:"insecure"`
		} `yaml:"nats"`
	}
	if err := yaml.Unmarshal(bot, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.NATS.NKeySeed != "/etc/signoff/nats/approver.nk" || cfg.NATS.InboxPrefix != "_INBOX.approver" || cfg.NATS.Insecure {
		t.Errorf("approver-bot.yaml nats %+v, want the mounted seed and _INBOX.approver, not insecure", cfg.NATS)
	}
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
