package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/nats-io/nkeys"
)

// roles are the users deploy/nats/auth.conf and accounts.conf define: the
// role users of auth.conf, and the DEMO tenant's users of tenant-demo.conf
// (broker and admin are SIGNOFF's in accounts.conf).
var roles = []string{"broker", "approver", "admin", "agent", "demo-agent", "demo-approver", "demo-admin"}

// tenantsFile is the brokers' --tenants file genkeys writes for the DEMO
// tenant when its keys are in the directory.
const tenantsFile = "tenants.yaml"

// envFile is the file, in the key directory, that lists every public key as
// an environment variable.
const envFile = "nkeys.env"

var validName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`)

// key is one generated (or kept) user key.
type key struct {
	Name      string
	PublicKey string
	SeedFile  string
	Created   bool
}

// envVar is the environment variable the NATS configuration reads name's
// public key from.
func envVar(name string) string {
	return "SIGNOFF_NKEY_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "genkeys:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("genkeys", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dir := fl.String("dir", "deploy/nats/keys", "directory for the seeds (NAME.nk), public keys (NAME.pub) and "+envFile)
	force := fl.Bool("force", false, "replace existing seeds (every service using them must get the new ones)")
	readable := fl.Bool("readable", false, "write seeds readable by every user (0644) in a directory only the owner may enter (0700): for bind-mounting single seed files into containers that run as another user (deploy/compose)")
	policy := fl.String("tenant-policy", "/etc/signoff/policy.yaml", "the DEMO tenant's policy file as the brokers see it, written to "+tenantsFile)
	fl.Usage = func() {
		fmt.Fprintf(stderr, "usage: genkeys [-dir DIR] [-force] [NAME ...]\n\n"+
			"Creates an nkey user per NAME (default: %s) and writes DIR/%s.\n\n", strings.Join(roles, " "), envFile)
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return err
	}
	names := fl.Args()
	if len(names) == 0 {
		names = roles
	}
	keys, err := generate(*dir, names, *force)
	if err != nil {
		return err
	}
	if err := os.Chmod(*dir, 0o700); err != nil {
		return err
	}
	if *readable {
		for _, k := range keys {
			if err := os.Chmod(k.SeedFile, 0o644); err != nil {
				return err
			}
		}
	}
	wrote, err := writeTenants(*dir, *policy)
	if err != nil {
		return err
	}
	if wrote {
		fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(*dir, tenantsFile))
	}
	for _, k := range keys {
		state := "kept"
		if k.Created {
			state = "created"
		}
		fmt.Fprintf(stdout, "%-14s %s  %s (%s)\n", k.Name, k.PublicKey, k.SeedFile, state)
	}
	fmt.Fprintf(stdout, "\nwrote %s\n", filepath.Join(*dir, envFile))
	return nil
}

// generate creates a user key for each name in dir (keeping existing seeds
// unless force) and rewrites dir's env file from every seed there. It
// returns the keys of names, in order.
func generate(dir string, names []string, force bool) ([]key, error) {
	seen := map[string]bool{}
	for _, n := range names {
		if !validName.MatchString(n) {
			return nil, fmt.Errorf("name %q: use lower-case letters, digits and '-', starting with a letter (it becomes a NATS inbox token and an environment variable)", n)
		}
		if seen[n] {
			return nil, fmt.Errorf("name %q given twice", n)
		}
		seen[n] = true
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	keys := make([]key, 0, len(names))
	for _, n := range names {
		k, err := ensureKey(dir, n, force)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	if err := writeEnv(dir); err != nil {
		return nil, err
	}
	return keys, nil
}

func ensureKey(dir, name string, force bool) (key, error) {
	seedFile := filepath.Join(dir, name+".nk")
	if !force {
		kp, err := readSeed(seedFile)
		switch {
		case err == nil:
			pub, _ := kp.PublicKey()
			return key{Name: name, PublicKey: pub, SeedFile: seedFile}, writePublic(dir, name, pub)
		case !errors.Is(err, fs.ErrNotExist):
			return key{}, err
		}
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return key{}, err
	}
	seed, err := kp.Seed()
	if err != nil {
		return key{}, err
	}
	pub, _ := kp.PublicKey()
	// Write then rename: a reader never sees half a seed, and the mode is
	// 0600 from the first byte.
	tmp, err := os.CreateTemp(dir, "."+name+".nk.*")
	if err != nil {
		return key{}, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(seed, '\n')); err != nil {
		tmp.Close()
		return key{}, err
	}
	if err := tmp.Close(); err != nil {
		return key{}, err
	}
	if err := os.Rename(tmp.Name(), seedFile); err != nil {
		return key{}, err
	}
	return key{Name: name, PublicKey: pub, SeedFile: seedFile, Created: true}, writePublic(dir, name, pub)
}

func readSeed(file string) (nkeys.KeyPair, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	defer clear(data)
	kp, err := nkeys.FromSeed(bytes.TrimSpace(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w (remove it or use -force)", file, err)
	}
	if pub, _ := kp.PublicKey(); !nkeys.IsValidPublicUserKey(pub) {
		return nil, fmt.Errorf("%s: not a user seed (remove it or use -force)", file)
	}
	return kp, nil
}

func writePublic(dir, name, pub string) error {
	return os.WriteFile(filepath.Join(dir, name+".pub"), []byte(pub+"\n"), 0o644)
}

// writeEnv lists the public key of every seed in dir.
func writeEnv(dir string) error {
	seeds, err := filepath.Glob(filepath.Join(dir, "*.nk"))
	if err != nil {
		return err
	}
	sort.Strings(seeds)
	var b strings.Builder
	b.WriteString("# Public nkeys of the Signoff NATS users (deploy/nats/genkeys). Not secret.\n")
	for _, f := range seeds {
		name := strings.TrimSuffix(filepath.Base(f), ".nk")
		if !validName.MatchString(name) {
			continue
		}
		kp, err := readSeed(f)
		if err != nil {
			return err
		}
		pub, _ := kp.PublicKey()
		fmt.Fprintf(&b, "%s=%s\n", envVar(name), pub)
	}
	return os.WriteFile(filepath.Join(dir, envFile), []byte(b.String()), 0o644)
}

// writeTenants writes the brokers' --tenants file of the DEMO tenant
// (docs/OPERATIONS.md, "Tenants and identity") from the demo-* keys in dir:
// its agent's key maps to agent id demo-agent, its approver's may respond,
// its admin's may administer. Without those keys it writes nothing.
func writeTenants(dir, policy string) (bool, error) {
	pub := map[string]string{}
	for _, n := range []string{"demo-agent", "demo-approver", "demo-admin"} {
		kp, err := readSeed(filepath.Join(dir, n+".nk"))
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		pub[n], _ = kp.PublicKey()
	}
	if strings.ContainsAny(policy, "\n\"") {
		return false, fmt.Errorf("-tenant-policy %q: one line without quotes", policy)
	}
	doc := fmt.Sprintf(`# The brokers' --tenants file for the DEMO account of deploy/nats/tenant-demo.conf,
# written by deploy/nats/genkeys from the keys next to it. Public keys only: not secret.
tenants:
  - id: demo
    account: DEMO
    policy: "%s"
    agents:
      - user: %s   # demo-agent.nk
        agent_id: demo-agent
        # The sessions it may use (globs). "*" is every session of the
        # tenant: fine for one agent; give each agent its own when several
        # share a tenant, or one may use another's grants and stops.
        sessions: ["*"]
    bots:
      - user: %s   # demo-approver.nk
    admins:
      - user: %s   # demo-admin.nk
`, policy, pub["demo-agent"], pub["demo-approver"], pub["demo-admin"])
	return true, os.WriteFile(filepath.Join(dir, tenantsFile), []byte(doc), 0o644)
}
