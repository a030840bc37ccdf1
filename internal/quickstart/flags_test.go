package quickstart

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// otherTools are the flags the docs show of commands that are not
// Signoff's (kubectl, docker, the nats CLI, git, claude, the image build
// script), by flag.
var otherTools = map[string]string{
	"from":                         "Dockerfile COPY",
	"from-file":                    "kubectl create secret",
	"from-literal":                 "kubectl create secret",
	"dry-run":                      "git clean",
	"network":                      "docker run",
	"rm":                           "docker run",
	"count":                        "nats sub",
	"force":                        "scripts/build-images.sh",
	"oneline":                      "git log",
	"dangerously-skip-permissions": "claude",
	"appendonly":                   "redis-server",
	"appendfsync":                  "redis-server",
	"help":                         "every command",
	"stat":                         "git diff",
	"header":                       "nats request",
	"user":                         "nats CLI, nsc",
	"password":                     "nats CLI",
	"signal":                       "nats-server",
	"generate-signing-key":         "nsc add operator",
	"sys":                          "nsc add operator",
	"name":                         "nsc",
	"js-enable":                    "nsc edit account",
	"account":                      "nsc",
	"service":                      "nsc add export/import",
	"subject":                      "nsc add export",
	"account-token-position":       "nsc add export",
	"field":                        "nsc describe",
	"src-account":                  "nsc add import",
	"remote-subject":               "nsc add import",
	"share":                        "nsc add import",
	"local-subject":                "nsc add import",
	"allow-pub":                    "nsc edit user",
	"allow-pub-response":           "nsc edit user",
	"nats-resolver":                "nsc generate config",
	"include":                      "grep -r",
}

// helpFlagLine is a flag of Go's flag.PrintDefaults: "  -name type".
var helpFlagLine = regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`)

// docFlagRef is a flag as prose or a command line names it: --name.
var docFlagRef = regexp.MustCompile(`(?:^|[\s` + "`" + `(\[/])--([a-z][a-z0-9-]*)`)

// TestEveryDocumentedFlagExists builds broker, approver-bot and signoff and
// reads the flags of every command and subcommand from their --help; each
// --flag that README.md and docs/ name (in the policy reference, on the
// lines about the broker) must be one of them — a renamed or removed
// flag left in the docs is a command that fails for the reader.
func TestEveryDocumentedFlagExists(t *testing.T) {
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "./cmd/...")
	build.Dir, build.Env = repoRoot, append(userEnv(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/...: %v\n%s", err, out)
	}
	real := map[string]bool{}
	for _, args := range [][]string{
		{"broker"}, {"broker", "policy", "check"}, {"broker", "health"},
		{"approver-bot"}, {"approver-bot", "health"}, {"approver-bot", "hash-password"},
		{"signoff", "hook", "claude-code"}, {"signoff", "hook", "codex"}, {"signoff", "mcp-gateway"},
		{"signoff", "admin", "pending"}, {"signoff", "admin", "grants"}, {"signoff", "admin", "revoke"},
		{"signoff", "admin", "stop"}, {"signoff", "admin", "resume"}, {"signoff", "admin", "stops"},
		{"signoff", "admin", "mode"}, {"signoff", "admin", "policy"}, {"signoff", "admin", "audit"},
		{"signoff", "admin", "agents"}, {"signoff", "admin", "replay"}, {"signoff", "admin", "shadow"},
		{"signoff", "admin", "canary"},
	} {
		cmd := exec.Command(filepath.Join(bin, args[0]), append(args[1:], "--help")...)
		out, _ := cmd.CombinedOutput() // --help exits 0 or 2, as the command's usage says
		found := helpFlagLine.FindAllStringSubmatch(string(out), -1)
		if len(found) == 0 {
			t.Fatalf("%s --help lists no flags:\n%s", strings.Join(args, " "), out)
		}
		for _, m := range found {
			real[m[1]] = true
		}
	}
	// --version is a command of each binary, not a listed flag: it counts
	// when all three answer it.
	versions := 0
	for _, name := range []string{"broker", "approver-bot", "signoff"} {
		out, err := exec.Command(filepath.Join(bin, name), "--version").Output()
		if err == nil && strings.HasPrefix(string(out), name+" ") {
			versions++
		}
	}
	real["version"] = versions == 3
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, filepath.Join(repoRoot, "README.md"))
	refs := 0
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		// The policy reference names options of git, curl, tar… (what the
		// shell analysis knows of other programs) on most lines; there only
		// the lines about the broker name Signoff's flags.
		policyRef := filepath.Base(doc) == "POLICY.md"
		rel, _ := filepath.Rel(repoRoot, doc)
		for i, line := range strings.Split(string(data), "\n") {
			if policyRef && !strings.Contains(line, "broker") {
				continue
			}
			for _, m := range docFlagRef.FindAllStringSubmatch(line, -1) {
				name := m[1]
				if real[name] || otherTools[name] != "" {
					refs++
					continue
				}
				t.Errorf("%s:%d: --%s is no flag of broker, approver-bot or signoff (another tool's? add it to otherTools)", rel, i+1, name)
			}
		}
	}
	if refs < 50 {
		t.Fatalf("found %d flag references in the docs; the extraction is broken", refs)
	}
}
