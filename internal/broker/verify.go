package broker

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// DefaultSignatureMaxSkew bounds how far a signed response's signed_at may
// be from the broker's clock, either way.
const DefaultSignatureMaxSkew = 5 * time.Minute

// Refusals of a signed-response check. Each wraps [messages.ErrForbidden]:
// the broker answers them with an error reply of code forbidden and decides
// nothing.
var (
	ErrUnsigned       = fmt.Errorf("%w: response is not signed", messages.ErrForbidden)
	ErrUntrustedKey   = fmt.Errorf("%w: response is signed by a key that is not a trusted approver key", messages.ErrForbidden)
	ErrBadSignature   = fmt.Errorf("%w: response signature does not verify", messages.ErrForbidden)
	ErrStaleSignature = fmt.Errorf("%w: response signature is outside the accepted time window", messages.ErrForbidden)
	ErrReplayed       = fmt.Errorf("%w: response signature was seen before (replay)", messages.ErrForbidden)
)

// VerifyResponse checks r's signature: r.KeyID is one of the trusted public
// user nkeys, r.Signature is that key's ed25519 signature over
// [messages.Response.SigningBytes], and r.SignedAt is within maxSkew of now,
// either way. It does not remember signatures; the broker adds the replay
// check. The error wraps one of [ErrUnsigned], [ErrUntrustedKey],
// [ErrBadSignature] or [ErrStaleSignature].
func VerifyResponse(r *messages.Response, trusted map[string]bool, now time.Time, maxSkew time.Duration) error {
	if r.Signature == "" && r.KeyID == "" && r.SignedAt.IsZero() {
		return ErrUnsigned
	}
	if r.KeyID == "" || r.SignedAt.IsZero() || r.Signature == "" {
		return fmt.Errorf("%w: a signed response carries signature, key_id and signed_at", ErrUnsigned)
	}
	if !trusted[r.KeyID] {
		return fmt.Errorf("%w (key_id %s)", ErrUntrustedKey, shorten(r.KeyID))
	}
	sig, err := messages.DecodeSignature(r.Signature)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	kp, err := nkeys.FromPublicKey(r.KeyID)
	if err != nil { // trusted keys were checked when they were configured
		return fmt.Errorf("%w: key_id: %w", ErrUntrustedKey, err)
	}
	if err := kp.Verify(r.SigningBytes(), sig); err != nil {
		return fmt.Errorf("%w (signed by %s): the response was changed after signing or signed by another key", ErrBadSignature, shorten(r.KeyID))
	}
	if d := now.Sub(r.SignedAt); d > maxSkew || d < -maxSkew {
		return fmt.Errorf("%w: signed_at %s is %s from the broker's clock (limit ±%s); check the clocks of approver and broker",
			ErrStaleSignature, r.SignedAt.UTC().Format(time.RFC3339), d.Round(time.Second), maxSkew)
	}
	return nil
}

// ParseApproverKeys reads the value of --approver-keys: a comma-separated
// list of public user nkeys ("U…"), or the name of a file holding them, one
// or more per line (separated by spaces or commas; '#' starts a comment).
// An empty spec gives no keys. Every key is checked.
func ParseApproverKeys(spec string) ([]string, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, nil
	}
	text, where := spec, "list"
	if !looksLikeKeyList(spec) {
		data, err := os.ReadFile(spec)
		if err != nil {
			return nil, fmt.Errorf("approver keys: %q is neither a list of public user nkeys (U…) nor a readable file: %w", spec, err)
		}
		text, where = string(data), spec
	}
	var keys []string
	for n, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		for _, k := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\r' }) {
			if !nkeys.IsValidPublicUserKey(k) {
				return nil, fmt.Errorf("approver keys %s, line %d: %q is not a public user nkey (U… as printed by deploy/nats/genkeys)", where, n+1, shorten(k))
			}
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("approver keys %s: no keys found", where)
	}
	return keys, nil
}

// looksLikeKeyList reports whether spec is a list of keys rather than a file
// name: its first entry is a public user key.
func looksLikeKeyList(spec string) bool {
	first, _, _ := strings.Cut(spec, ",")
	return nkeys.IsValidPublicUserKey(strings.TrimSpace(first))
}

func shorten(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// signatureGuard is a replica's signed-response check: the trusted keys,
// the time window and the signatures seen within it.
type signatureGuard struct {
	trusted  map[string]bool
	required bool
	maxSkew  time.Duration
	now      func() time.Time

	mu        sync.Mutex
	seen      map[string]time.Time // signature → when it turns stale
	lastSweep time.Time
}

// newSignatureGuard checks the signature settings of c; it returns nil when
// responses are not checked at all (no keys, not required).
func newSignatureGuard(c *Config) (*signatureGuard, error) {
	if len(c.ApproverKeys) == 0 {
		if c.RequireSignedResponses {
			return nil, errors.New("broker: RequireSignedResponses needs ApproverKeys (--approver-keys): the public nkeys of the approver bots")
		}
		return nil, nil
	}
	if c.SignatureMaxSkew < time.Second {
		return nil, fmt.Errorf("broker: SignatureMaxSkew %s is too small (minimum 1s)", c.SignatureMaxSkew)
	}
	g := &signatureGuard{trusted: map[string]bool{}, required: c.RequireSignedResponses, maxSkew: c.SignatureMaxSkew,
		now: time.Now, seen: map[string]time.Time{}}
	for _, k := range c.ApproverKeys {
		if !nkeys.IsValidPublicUserKey(k) {
			return nil, fmt.Errorf("broker: ApproverKeys: %q is not a public user nkey (U…)", shorten(k))
		}
		g.trusted[k] = true
	}
	return g, nil
}

// check verifies r and remembers its signature. Unsigned responses pass
// unless signatures are required; a signed one must verify whenever keys
// are configured, so a forged signature is never ignored.
func (g *signatureGuard) check(r *messages.Response) error {
	if !g.required && r.Signature == "" && r.KeyID == "" && r.SignedAt.IsZero() {
		return nil
	}
	now := g.now()
	if err := VerifyResponse(r, g.trusted, now, g.maxSkew); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if now.Sub(g.lastSweep) > g.maxSkew {
		for s, until := range g.seen {
			if now.After(until) {
				delete(g.seen, s)
			}
		}
		g.lastSweep = now
	}
	// ed25519 signatures are deterministic: the same response signed by the
	// same key has the same signature, so the signature names the response.
	if _, dup := g.seen[r.Signature]; dup {
		return fmt.Errorf("%w: sign each attempt anew (request %s, approver %s)", ErrReplayed, r.RequestID, r.Approver.ID)
	}
	// Past signed_at + maxSkew the window check refuses it anyway.
	g.seen[r.Signature] = r.SignedAt.Add(g.maxSkew)
	return nil
}

// checkSignature runs the signed-response check of the broker's config on a
// decoded response; it returns the error reply (code forbidden) that
// refuses it, or nil. A refused response decides nothing and reads no state:
// its sender learns nothing about the request.
func (b *Broker) checkSignature(resp *messages.Response) []byte {
	g := b.cfg.signatures
	if g == nil {
		return nil
	}
	err := g.check(resp)
	if err == nil {
		return nil
	}
	b.log.Warn("response refused: signature", "request_id", resp.RequestID, "session_id", resp.SessionID,
		"approver", resp.Approver.ID, "key_id", shorten(resp.KeyID), "err", err)
	return b.badMessage(err)
}
