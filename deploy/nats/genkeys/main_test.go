package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nkeys"
	"gopkg.in/yaml.v3"
)

// envOf parses an env file into a map.
func envOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, envFile))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("env line %q", line)
		}
		env[k] = v
	}
	return env
}

func seedPublic(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := nkeys.ParseDecoratedNKey(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	pub, _ := kp.PublicKey()
	return pub
}

func TestGenerateWritesRoleKeysTheConfigReads(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	var out bytes.Buffer
	if err := run([]string{"-dir", dir}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	env := envOf(t, dir)
	if len(env) != len(roles) {
		t.Fatalf("env has %d keys, want %d: %v", len(env), len(roles), env)
	}
	for _, role := range roles {
		seed := filepath.Join(dir, role+".nk")
		pub := seedPublic(t, seed)
		if !nkeys.IsValidPublicUserKey(pub) {
			t.Fatalf("%s: %s is not a user key", role, pub)
		}
		if env[envVar(role)] != pub {
			t.Fatalf("%s=%s, seed's key is %s", envVar(role), env[envVar(role)], pub)
		}
		st, err := os.Stat(seed)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Fatalf("%s has mode %v, want 0600", seed, st.Mode().Perm())
		}
		pubFile, _ := os.ReadFile(filepath.Join(dir, role+".pub"))
		if strings.TrimSpace(string(pubFile)) != pub {
			t.Fatalf("%s.pub = %q, want %s", role, pubFile, pub)
		}
		if !strings.Contains(out.String(), pub) {
			t.Fatalf("output does not show %s's key", role)
		}
	}
	if envVar("agent-1") != "SIGNOFF_NKEY_AGENT_1" {
		t.Fatalf("envVar(agent-1) = %s", envVar("agent-1"))
	}
}

func TestGenerateKeepsExistingSeedsUnlessForced(t *testing.T) {
	dir := t.TempDir()
	first, err := generate(dir, []string{"broker", "agent-1"}, false)
	if err != nil {
		t.Fatal(err)
	}
	// Adding an agent keeps the others and lists all of them.
	second, err := generate(dir, []string{"agent-2", "broker"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !second[0].Created || second[1].Created || second[1].PublicKey != first[0].PublicKey {
		t.Fatalf("second run: %+v (first %+v)", second, first)
	}
	env := envOf(t, dir)
	for _, k := range append(first, second[0]) {
		if env[envVar(k.Name)] != k.PublicKey {
			t.Fatalf("env %s = %q, want %s", envVar(k.Name), env[envVar(k.Name)], k.PublicKey)
		}
	}
	forced, err := generate(dir, []string{"broker"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if !forced[0].Created || forced[0].PublicKey == first[0].PublicKey {
		t.Fatal("-force kept the old broker key")
	}
	if envOf(t, dir)[envVar("broker")] != forced[0].PublicKey {
		t.Fatal("the env file still lists the replaced key")
	}
}

func TestGenerateRefusesBadNamesAndBadSeeds(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		want  string
	}{
		{"an upper-case name", []string{"Agent"}, "lower-case"},
		{"a name with a dot would split the inbox subject", []string{"agent.1"}, "lower-case"},
		{"a name with an underscore would collide in the environment", []string{"agent_1"}, "lower-case"},
		{"a duplicate name", []string{"agent", "agent"}, "twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := generate(t.TempDir(), tc.names, false); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "broker.nk"), []byte("not a seed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := generate(dir, []string{"broker"}, false); err == nil || !strings.Contains(err.Error(), "broker.nk") {
		t.Fatalf("a corrupt seed file: err = %v", err)
	}
	if _, err := generate(dir, []string{"broker"}, true); err != nil {
		t.Fatalf("-force over a corrupt seed: %v", err)
	}
}

// The default keys serve both configurations (auth.conf's roles and
// accounts.conf's SIGNOFF and DEMO users), and tenants.yaml maps the DEMO
// keys as the brokers' --tenants file wants them.
func TestGenerateWritesTheTenantsFileOfTheDemoKeys(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	if err := run([]string{"-dir", dir, "-tenant-policy", "/etc/signoff/policy-demo.yaml"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	var file struct {
		Tenants []struct {
			ID      string `yaml:"id"`
			Account string `yaml:"account"`
			Policy  string `yaml:"policy"`
			Agents  []struct {
				User    string `yaml:"user"`
				AgentID string `yaml:"agent_id"`
			} `yaml:"agents"`
			Bots []struct {
				User string `yaml:"user"`
			} `yaml:"bots"`
			Admins []struct {
				User string `yaml:"user"`
			} `yaml:"admins"`
		} `yaml:"tenants"`
	}
	data, err := os.ReadFile(filepath.Join(dir, tenantsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &file); err != nil {
		t.Fatalf("%s: %v\n%s", tenantsFile, err, data)
	}
	if len(file.Tenants) != 1 {
		t.Fatalf("tenants %+v, want DEMO only", file.Tenants)
	}
	tn := file.Tenants[0]
	if tn.ID != "demo" || tn.Account != "DEMO" || tn.Policy != "/etc/signoff/policy-demo.yaml" {
		t.Errorf("tenant %s/%s/%s, want demo/DEMO and the policy given", tn.ID, tn.Account, tn.Policy)
	}
	if len(tn.Agents) != 1 || tn.Agents[0].User != seedPublic(t, filepath.Join(dir, "demo-agent.nk")) || tn.Agents[0].AgentID != "demo-agent" {
		t.Errorf("agents %+v, want demo-agent.nk's key as demo-agent", tn.Agents)
	}
	if len(tn.Bots) != 1 || tn.Bots[0].User != seedPublic(t, filepath.Join(dir, "demo-approver.nk")) {
		t.Errorf("bots %+v, want demo-approver.nk's key", tn.Bots)
	}
	if len(tn.Admins) != 1 || tn.Admins[0].User != seedPublic(t, filepath.Join(dir, "demo-admin.nk")) {
		t.Errorf("admins %+v, want demo-admin.nk's key", tn.Admins)
	}
	// Seeds are the owner's only, unless -readable (for containers); the
	// directory is the owner's in both cases.
	for _, readable := range []bool{false, true} {
		args := []string{"-dir", dir}
		want := os.FileMode(0o600)
		if readable {
			args, want = append(args, "-readable"), 0o644
		}
		if err := run(args, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(filepath.Join(dir, "broker.nk"))
		if err != nil {
			t.Fatal(err)
		}
		if readable && st.Mode().Perm() != want {
			t.Errorf("-readable: broker.nk mode %v, want %v", st.Mode().Perm(), want)
		}
		if !readable && st.Mode().Perm() != want {
			t.Errorf("broker.nk mode %v, want %v", st.Mode().Perm(), want)
		}
		if d, _ := os.Stat(dir); d.Mode().Perm() != 0o700 {
			t.Errorf("key directory mode %v, want 0700", d.Mode().Perm())
		}
	}
}
