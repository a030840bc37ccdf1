package approverbot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/signoff-dev/signoff/pkg/messages"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func newUser(t *testing.T) (nkeys.KeyPair, string, string) {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := kp.Seed()
	pub, _ := kp.PublicKey()
	return kp, string(seed), pub
}

func TestNewNKeySignerReadsSeedAndCredsFiles(t *testing.T) {
	_, seed, pub := newUser(t)
	creds := "-----BEGIN NATS USER JWT-----\neyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.e30.c2ln\n------END NATS USER JWT------\n\n" +
		"************************* IMPORTANT *************************\nNKEY Seed printed below can be used to sign and prove identity.\n\n" +
		"-----BEGIN USER NKEY SEED-----\n" + seed + "\n------END USER NKEY SEED------\n"
	tests := []struct {
		name, content string
	}{
		{"a bare seed as genkeys writes it", seed + "\n"},
		{"a bare seed without a newline", seed},
		{"a NATS credentials file", creds},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewNKeySigner(writeFile(t, "key", tc.content))
			if err != nil {
				t.Fatal(err)
			}
			if s.PublicKey() != pub {
				t.Fatalf("public key %s, want %s", s.PublicKey(), pub)
			}
		})
	}
}

func TestNewNKeySignerRefusesWhatCannotSignAsAUser(t *testing.T) {
	_, _, pub := newUser(t)
	acct, _ := nkeys.CreateAccount()
	acctSeed, _ := acct.Seed()
	tests := []struct {
		name, content, want string
	}{
		{"a public key has no private part", pub + "\n", "no nkey seed found"},
		{"an account seed is not a user key", string(acctSeed) + "\n", "not a user nkey"},
		{"garbage is no seed", "hello\n", "no nkey seed found"},
		{"a corrupted seed fails its checksum", "SUAGARBAGE\n", "invalid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, "key", tc.content)
			_, err := NewNKeySigner(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("err = %v, want one naming %s and saying %q", err, p, tc.want)
			}
		})
	}
	if _, err := NewNKeySigner(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing file: err = %v", err)
	}
	verifyOnly, _ := nkeys.FromPublicKey(pub)
	if _, err := NewNKeySignerFromKeyPair(verifyOnly); err == nil {
		t.Fatal("a public-only key pair was accepted as a signer")
	}
}

func TestSignStampsAndSignsTheResponse(t *testing.T) {
	kp, _, pub := newUser(t)
	s, err := NewNKeySignerFromKeyPair(kp)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 3, 4, 5, 6, 7, 8, time.FixedZone("X", 7200))
	s.now = func() time.Time { return at }
	r := messages.Response{V: 1, RequestID: "r1", SessionID: "s1", Approver: messages.Approver{ID: "alice"},
		Approved: true, Scope: messages.ScopeOnce, Signature: "left over from an earlier attempt"}
	if err := s.Sign(&r); err != nil {
		t.Fatal(err)
	}
	if r.KeyID != pub || !r.SignedAt.Equal(at) || r.SignedAt.Location() != time.UTC {
		t.Fatalf("stamp: key_id %s signed_at %v", r.KeyID, r.SignedAt)
	}
	if err := r.Validate(); err != nil {
		t.Fatalf("a signed response does not validate: %v", err)
	}
	sig, err := messages.DecodeSignature(r.Signature)
	if err != nil {
		t.Fatal(err)
	}
	verifier, _ := nkeys.FromPublicKey(pub)
	if err := verifier.Verify(r.SigningBytes(), sig); err != nil {
		t.Fatalf("signature does not verify: %v", err)
	}
	r.Approved, r.Scope, r.RejectMode = false, "", messages.RejectHard
	if verifier.Verify(r.SigningBytes(), sig) == nil {
		t.Fatal("the signature still verifies after approved was flipped")
	}

	// Each attempt is signed anew: a retry is not a replay.
	first := r.Signature
	s.now = func() time.Time { return at.Add(time.Millisecond) }
	if err := s.Sign(&r); err != nil {
		t.Fatal(err)
	}
	if r.Signature == first {
		t.Fatal("signing again later gave the same signature")
	}
}
