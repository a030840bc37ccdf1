package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"
)

func testCredential(id byte, name string) credential {
	return credential{Credential: webauthn.Credential{ID: []byte{id, 1, 2, 3}, PublicKey: []byte{9, 9}},
		Name: name, AddedAt: time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)}
}

// Registered authenticators survive a restart of the bot when
// web.webauthn.credentials_file is set: a new stepUp reads what the old one
// wrote, removals included.
func TestAuthenticatorsSurviveARestartInTheCredentialsFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "webauthn.json")
	wc := Config{WebAuthn: WebAuthnConfig{RPID: "localhost", Origins: []string{"http://localhost"}, CredentialsFile: file}}
	s, err := newStepUp(wc)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"yubikey", "laptop"} {
		if err := s.add("alice", testCredential(byte(i), name)); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := s.remove("alice", credentialID(testCredential(0, "").ID)); !ok || err != nil {
		t.Fatalf("remove: %v, %v", ok, err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v, %v; want mode 0600", fi, err)
	}
	again, err := newStepUp(wc)
	if err != nil {
		t.Fatal(err)
	}
	got := again.list("alice")
	if len(got) != 1 || got[0].Name != "laptop" {
		t.Fatalf("after a restart alice has %+v, want only the laptop", got)
	}
	if u := again.user(principal{approver: "alice"}); len(u.WebAuthnCredentials()) != 1 || string(u.WebAuthnCredentials()[0].PublicKey) != "\x09\x09" {
		t.Fatalf("the restored credential lost its key: %+v", u.WebAuthnCredentials())
	}
}

// A credentials file that cannot be read stops the bot, naming the file;
// one that cannot be written refuses the registration and keeps nothing.
func TestACredentialsFileThatCannotBeUsedChangesNothing(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := newStepUp(Config{WebAuthn: WebAuthnConfig{CredentialsFile: bad}}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("a corrupt credentials file: %v, want an error naming it", err)
	}
	gone := filepath.Join(dir, "no-such-dir", "webauthn.json")
	s, err := newStepUp(Config{WebAuthn: WebAuthnConfig{CredentialsFile: gone}})
	if err != nil {
		t.Fatalf("a file that does not exist yet is an empty one: %v", err)
	}
	if err := s.add("alice", testCredential(1, "yubikey")); err == nil {
		t.Fatal("a registration that could not be saved was accepted")
	}
	if got := s.list("alice"); len(got) != 0 {
		t.Fatalf("an unsaved registration is kept in memory: %+v", got)
	}
}

func TestUserVerificationSettingIsCheckedAtStart(t *testing.T) {
	for _, v := range []string{"", "preferred", "required"} {
		if _, err := newStepUp(Config{WebAuthn: WebAuthnConfig{UserVerification: v}}); err != nil {
			t.Errorf("user_verification %q: %v", v, err)
		}
	}
	_, err := newStepUp(Config{WebAuthn: WebAuthnConfig{UserVerification: "discouraged"}})
	if err == nil || !strings.Contains(err.Error(), "web.webauthn.user_verification") || !strings.Contains(err.Error(), "discouraged") {
		t.Fatalf("user_verification discouraged: %v, want an error naming the setting and the value", err)
	}
}
