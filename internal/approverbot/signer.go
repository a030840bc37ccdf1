package approverbot

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// NKeySigner signs responses with the approver bot's nkey: the user key it
// authenticates to NATS with. Brokers started with
// --require-signed-responses accept only responses signed by a key in their
// --approver-keys, so a client that can publish on the respond subject but
// does not hold the bot's seed cannot answer for the bot's approvers.
// An NKeySigner is safe for concurrent use.
type NKeySigner struct {
	kp  nkeys.KeyPair
	pub string
	now func() time.Time
}

// NewNKeySigner reads the nkey user seed in seedFile: a bare seed ("SU…"),
// as `nsc` and deploy/nats/genkeys write them, or a NATS credentials file.
// The key stays in memory for the signer's life.
func NewNKeySigner(seedFile string) (*NKeySigner, error) {
	data, err := os.ReadFile(seedFile)
	if err != nil {
		return nil, fmt.Errorf("approverbot: signing key: %w", err)
	}
	defer clear(data)
	kp, err := nkeys.ParseDecoratedNKey(data)
	if err != nil {
		return nil, fmt.Errorf("approverbot: signing key %s: %w", seedFile, err)
	}
	s, err := NewNKeySignerFromKeyPair(kp)
	if err != nil {
		return nil, fmt.Errorf("approverbot: signing key %s: %w", seedFile, err)
	}
	return s, nil
}

// NewNKeySignerFromKeyPair returns a signer for kp, which must be a user key
// pair holding its private key.
func NewNKeySignerFromKeyPair(kp nkeys.KeyPair) (*NKeySigner, error) {
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, err
	}
	if !nkeys.IsValidPublicUserKey(pub) {
		return nil, fmt.Errorf("%s is not a user nkey (want a seed starting with SU)", pub)
	}
	if _, err := kp.PrivateKey(); err != nil {
		return nil, errors.New("the key pair holds no private key (a public key cannot sign)")
	}
	return &NKeySigner{kp: kp, pub: pub, now: time.Now}, nil
}

// PublicKey returns the signer's public user nkey ("U…"): the value to list
// in the brokers' --approver-keys.
func (s *NKeySigner) PublicKey() string { return s.pub }

// Sign implements [Signer]: it stamps r with the time and the signer's
// public key and signs [messages.Response.SigningBytes]. Sign every attempt
// anew: a broker refuses a signature it has seen before.
func (s *NKeySigner) Sign(r *messages.Response) error {
	r.SignedAt = s.now().UTC()
	r.KeyID = s.pub
	r.Signature = ""
	sig, err := s.kp.Sign(r.SigningBytes())
	if err != nil {
		return fmt.Errorf("approverbot: sign response: %w", err)
	}
	r.Signature = messages.EncodeSignature(sig)
	return nil
}
