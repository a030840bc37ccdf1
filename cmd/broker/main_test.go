package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/internal/buildinfo"
)

func TestPolicyCheckCommand(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "policy.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte("mode: auto-edit\nrules:\n  - { rule: \"bash(rm *)\", action: deny }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("mode: auto-edit\nrules:\n  - { rule: \"bash(rm *)\", action: nope }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Broker config files: one naming the good policy, one naming none.
	brokerConf := filepath.Join(dir, "broker.yaml")
	if err := os.WriteFile(brokerConf, []byte("policy: "+good+"\nworkers: 8\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	noPolicyConf := filepath.Join(dir, "nopolicy.yaml")
	if err := os.WriteFile(noPolicyConf, []byte("workers: 8\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		stdin      string
		wantStatus int
		wantOut    string
		wantErr    string
	}{
		{
			name:       "every line evaluated",
			args:       []string{"policy", "check", "--policy", good},
			stdin:      `{"tool":"bash","arguments":{"command":"rm -rf x"}}` + "\n",
			wantStatus: 0,
			wantOut:    `"action":"deny"`,
		},
		{
			name:       "a bad line exits 1 after the other lines",
			args:       []string{"policy", "check", "--policy", good},
			stdin:      "{\n" + `{"tool":"write_file","arguments":{"path":"x"}}` + "\n",
			wantStatus: 1,
			wantOut:    `{"line":2,"tool":"write_file","action":"allow"`,
			wantErr:    "some input lines could not be evaluated",
		},
		{
			name:       "the mode flag overrides the policy",
			args:       []string{"policy", "check", "--policy", good, "--mode", "always-ask"},
			stdin:      `{"tool":"write_file","arguments":{"path":"x"}}`,
			wantStatus: 0,
			wantOut:    `"action":"ask"`,
		},
		{
			name:       "an invalid policy exits 2 with its position",
			args:       []string{"policy", "check", "--policy", bad},
			wantStatus: 2,
			wantErr:    bad + `:3:35: rules[0].action: unknown action "nope" (want allow, deny or ask)`,
		},
		{
			name:       "a missing policy file exits 2",
			args:       []string{"policy", "check", "--policy", filepath.Join(dir, "none.yaml")},
			wantStatus: 2,
			wantErr:    "no such file",
		},
		{
			name:       "an invalid mode exits 2",
			args:       []string{"policy", "check", "--mode", "wild"},
			wantStatus: 2,
			wantErr:    `unknown mode "wild"`,
		},
		{
			name:       "without --policy the built-in policy is used",
			args:       []string{"policy", "check"},
			stdin:      `{"tool":"read_file","arguments":{"path":"app/.env"}}`,
			wantStatus: 0,
			wantOut:    `"action":"deny"`,
		},
		{
			name:       "--config reads the policy a broker config file names",
			args:       []string{"policy", "check", "--config", brokerConf},
			stdin:      `{"tool":"bash","arguments":{"command":"rm -rf x"}}`,
			wantStatus: 0,
			wantOut:    `"action":"deny"`,
		},
		{
			name:       "a policy file given as --config says to use --policy",
			args:       []string{"policy", "check", "--config", good},
			wantStatus: 2,
			wantErr:    "this looks like a policy file (it has the key \"rules\"): pass it as --policy " + good,
		},
		{
			name:       "a broker config without a policy key is an error, not the built-in policy",
			args:       []string{"policy", "check", "--config", noPolicyConf},
			wantStatus: 2,
			wantErr:    `has no "policy" key`,
		},
		{
			name:       "--policy and --config together are refused",
			args:       []string{"policy", "check", "--config", brokerConf, "--policy", good},
			wantStatus: 2,
			wantErr:    "--policy and --config: give one",
		},
		{
			name:       "--policy builtin is the built-in policy, as for the broker",
			args:       []string{"policy", "check", "--policy", "builtin"},
			stdin:      `{"tool":"read_file","arguments":{"path":"app/.env"}}`,
			wantStatus: 0,
			wantOut:    `"action":"deny"`,
		},
		{
			name:       "help exits 0",
			args:       []string{"policy", "check", "-h"},
			wantStatus: 0,
			wantErr:    "Usage: broker policy check",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			status := run(tc.args, strings.NewReader(tc.stdin), &out, &errOut)
			if status != tc.wantStatus {
				t.Errorf("status %d, want %d (stderr %q)", status, tc.wantStatus, errOut.String())
			}
			if !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("stdout %q does not contain %q", out.String(), tc.wantOut)
			}
			if !strings.Contains(errOut.String(), tc.wantErr) {
				t.Errorf("stderr %q does not contain %q", errOut.String(), tc.wantErr)
			}
		})
	}
}

func TestVersionNamesTheModuleAndRevision(t *testing.T) {
	for _, arg := range []string{"--version", "version"} {
		var out, errb bytes.Buffer
		if code := run([]string{arg}, strings.NewReader(""), &out, &errb); code != 0 || out.String() != "broker "+buildinfo.String()+"\n" {
			t.Errorf("broker %s: exit %d, %q", arg, code, out.String())
		}
	}
}
