package web

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
)

// Step-up on the web page (docs/APPROVERS.md "Step-up"): approvers register
// passkeys or security keys after signing in, and approving a question
// that needs step-up asks for one. The assertion's challenge is bound to
// the question: 16 random bytes, then the SHA-256 of the request id and
// the digest of what the card shows; the server keeps one ceremony per
// approver and question, and a verified (or failed) assertion ends it, so
// an assertion counts once, for that question only.

// ceremonyTTL bounds how long a started registration or step-up waits for
// the authenticator.
const ceremonyTTL = 2 * time.Minute

// maxCredentials bounds the authenticators one approver registers.
const maxCredentials = 10

// errTooManyCredentials: the approver has maxCredentials already.
var errTooManyCredentials = errors.New("too many authenticators")

// stepUp holds the relying party, the credentials and the ceremonies in
// progress. Its methods are safe for concurrent use.
type stepUp struct {
	rp  *webauthn.WebAuthn // nil: web.webauthn is not configured
	why string             // why rp is nil, for the error people get

	file string // where creds are kept ("": memory only)
	// uv is web.webauthn.user_verification, asked at registration and
	// step-up; "required" makes the library refuse an assertion without
	// the UV flag.
	uv protocol.UserVerificationRequirement
	// firstKey is web.webauthn.first_key (firstkey.go).
	firstKey string

	mu         sync.Mutex
	creds      map[string][]credential // approver id → credentials
	ceremonies map[string]ceremony     // ceremonyKey → session
	// usedCodes are the enrollment code hashes that added a first key,
	// per approver: a code adds one first key, once (firstkey.go).
	usedCodes map[string][]string
	// pendingCodes is the code hash a first key's registration began
	// with, per approver, until it finishes.
	pendingCodes map[string]string
}

// maxCeremonies bounds the ceremonies in progress across all approvers:
// each is a challenge a client asked for, kept for ceremonyTTL.
const maxCeremonies = 4096

// credential is one registered authenticator of an approver.
type credential struct {
	webauthn.Credential
	Name    string
	AddedAt time.Time
}

type ceremony struct {
	data    webauthn.SessionData
	expires time.Time
}

func newStepUp(wc Config) (*stepUp, error) {
	s := &stepUp{creds: map[string][]credential{}, ceremonies: map[string]ceremony{}, file: wc.WebAuthn.CredentialsFile,
		usedCodes: map[string][]string{}, pendingCodes: map[string]string{}}
	if s.file != "" {
		if err := s.load(); err != nil {
			return nil, err
		}
	}
	switch wc.WebAuthn.UserVerification {
	case "", string(protocol.VerificationPreferred):
		s.uv = protocol.VerificationPreferred
	case string(protocol.VerificationRequired):
		s.uv = protocol.VerificationRequired
	default:
		return nil, fmt.Errorf("web.webauthn.user_verification %q: want preferred or required", wc.WebAuthn.UserVerification)
	}
	switch wc.WebAuthn.FirstKey {
	case "", FirstKeyVerified:
		s.firstKey = FirstKeyVerified
	case FirstKeyAnySignIn:
		s.firstKey = FirstKeyAnySignIn
	default:
		return nil, fmt.Errorf("web.webauthn.first_key %q: want %s or %s", wc.WebAuthn.FirstKey, FirstKeyVerified, FirstKeyAnySignIn)
	}
	if wc.WebAuthn.RPID == "" {
		s.why = "web.webauthn.rp_id is not configured, so this page cannot ask for a passkey or security key"
		return s, nil
	}
	rp, err := webauthn.New(&webauthn.Config{RPID: wc.WebAuthn.RPID, RPDisplayName: "Signoff", RPOrigins: wc.WebAuthn.Origins})
	if err != nil {
		s.why = "web.webauthn: " + err.Error()
		return s, nil
	}
	s.rp = rp
	return s, nil
}

// load reads the credentials file; a missing file is an empty one, any
// other problem stops the bot (it would otherwise start without the
// authenticators people registered, and say nothing).
func (s *stepUp) load() error {
	data, err := os.ReadFile(s.file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("web.webauthn.credentials_file: %w", err)
	}
	var file storedFile
	if err := json.Unmarshal(data, &file); err != nil || file.Version != storedVersion {
		// The first format: the credentials map alone.
		file = storedFile{}
		if err := json.Unmarshal(data, &file.Credentials); err != nil {
			return fmt.Errorf("web.webauthn.credentials_file %s: not a credentials file written by this bot: %w", s.file, err)
		}
	}
	for approver, hashes := range file.UsedEnrollCodes {
		s.usedCodes[approver] = slices.Clone(hashes)
	}
	for approver, cs := range file.Credentials {
		for _, c := range cs {
			s.creds[approver] = append(s.creds[approver], credential{Credential: c.Credential, Name: c.Name, AddedAt: c.AddedAt})
		}
	}
	return nil
}

// storedVersion is the credentials file's format: an object with the
// credentials and the used enrollment codes. (The first format, the
// credentials map alone, is still read.)
const storedVersion = 2

type storedFile struct {
	Version         int                           `json:"version"`
	Credentials     map[string][]storedCredential `json:"credentials"`
	UsedEnrollCodes map[string][]string           `json:"used_enroll_codes,omitempty"`
}

// storedCredential is a credential in the file. (webauthn.Credential has
// its own JSON methods, which the embedding in credential would promote,
// dropping the name and the time.)
type storedCredential struct {
	Credential webauthn.Credential `json:"credential"`
	Name       string              `json:"name"`
	AddedAt    time.Time           `json:"added_at"`
}

// save writes every credential to the file, replacing it whole (a crash
// leaves the old file or the new one). Called with s.mu held.
func (s *stepUp) save() error {
	if s.file == "" {
		return nil
	}
	stored := storedFile{Version: storedVersion, Credentials: make(map[string][]storedCredential, len(s.creds)), UsedEnrollCodes: s.usedCodes}
	for approver, cs := range s.creds {
		for _, c := range cs {
			stored.Credentials[approver] = append(stored.Credentials[approver], storedCredential{c.Credential, c.Name, c.AddedAt})
		}
	}
	data, err := json.Marshal(stored)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.file), ".webauthn-*")
	if err != nil {
		return fmt.Errorf("save authenticators: %w", err)
	}
	defer os.Remove(tmp.Name()) // gone after the rename; cleans up a failure
	if _, err = tmp.Write(data); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.file)
	}
	if err != nil {
		return fmt.Errorf("save authenticators to %s: %w", s.file, err)
	}
	return nil
}

// user is an approver as the WebAuthn library sees them.
type user struct {
	id, display string
	creds       []credential
}

func (u user) WebAuthnID() []byte {
	sum := sha256.Sum256([]byte("signoff-approver:" + u.id))
	return sum[:]
}
func (u user) WebAuthnName() string        { return u.id }
func (u user) WebAuthnDisplayName() string { return u.display }
func (u user) WebAuthnCredentials() []webauthn.Credential {
	out := make([]webauthn.Credential, len(u.creds))
	for i, c := range u.creds {
		out[i] = c.Credential
	}
	return out
}

func (s *stepUp) user(p principal) user {
	s.mu.Lock()
	defer s.mu.Unlock()
	return user{id: p.approver, display: p.display, creds: slices.Clone(s.creds[p.approver])}
}

// start records a ceremony under key, replacing any earlier one.
func (s *stepUp) start(key string, data *webauthn.SessionData, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, c := range s.ceremonies {
		if now.After(c.expires) {
			delete(s.ceremonies, k)
		}
	}
	if _, again := s.ceremonies[key]; !again && len(s.ceremonies) >= maxCeremonies {
		return errTooManyCeremonies
	}
	s.ceremonies[key] = ceremony{data: *data, expires: now.Add(ceremonyTTL)}
	return nil
}

// errTooManyCeremonies: maxCeremonies are in progress.
var errTooManyCeremonies = errors.New("too many security key ceremonies in progress; try again in a minute")

// take ends the ceremony under key and returns it: each is used once.
func (s *stepUp) take(key string, now time.Time) (webauthn.SessionData, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.ceremonies[key]
	delete(s.ceremonies, key)
	if !ok || now.After(c.expires) {
		return webauthn.SessionData{}, false
	}
	return c.data, true
}

func registerKey(approver string) string { return "register\x00" + approver }

func assertKey(approver, requestID, digest string) string {
	return "assert\x00" + approver + "\x00" + requestID + "\x00" + digest
}

// questionChallenge is the challenge of a step-up for a question: random,
// then bound to the request id and digest.
func questionChallenge(requestID, digest string) ([]byte, error) {
	return boundChallenge("signoff-step-up-v1", requestID, digest)
}

// boundChallenge is a WebAuthn challenge of 16 random bytes followed by
// the SHA-256 of label and parts (NUL-separated): fresh each time, and
// bound to what it confirms.
func boundChallenge(label string, parts ...string) ([]byte, error) {
	b := make([]byte, 16, 16+sha256.Size)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(label + "\x00" + strings.Join(parts, "\x00")))
	return append(b, sum[:]...), nil
}

// errNoStepUp: the page cannot take a step-up (not configured).
var errNoStepUp = errors.New("step-up unavailable")

// credentialView is one authenticator as GET /api/webauthn/credentials
// lists it.
type credentialView struct {
	ID      string    `json:"id"` // unpadded base64url
	Name    string    `json:"name"`
	AddedAt time.Time `json:"added_at"`
}

func credentialID(id []byte) string { return base64.RawURLEncoding.EncodeToString(id) }

// list returns approver's authenticators.
func (s *stepUp) list(approver string) []credentialView {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []credentialView{}
	for _, c := range s.creds[approver] {
		out = append(out, credentialView{ID: credentialID(c.ID), Name: c.Name, AddedAt: c.AddedAt})
	}
	return out
}

// add stores c for approver; false when they have too many.
func (s *stepUp) add(approver string, c credential) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.creds[approver]) >= maxCredentials {
		return fmt.Errorf("%w: you have %d registered, the most allowed: remove one first", errTooManyCredentials, maxCredentials)
	}
	// A credential id names one authenticator of one approver (WebAuthn:
	// a relying party refuses an id it already knows).
	for other, cs := range s.creds {
		for _, known := range cs {
			if bytes.Equal(known.ID, c.ID) {
				return fmt.Errorf("%w (of %s)", errKnownCredential, map[bool]string{true: "you", false: "another approver"}[other == approver])
			}
		}
	}
	before, usedBefore := s.creds[approver], s.usedCodes[approver]
	s.creds[approver] = append(slices.Clone(before), c)
	// The first key's enrollment code, if it began with one, is spent.
	if code := s.pendingCodes[approver]; code != "" && len(before) == 0 {
		s.usedCodes[approver] = append(slices.Clone(usedBefore), code)
	}
	if err := s.save(); err != nil {
		s.creds[approver], s.usedCodes[approver] = before, usedBefore
		if usedBefore == nil {
			delete(s.usedCodes, approver)
		}
		return err
	}
	delete(s.pendingCodes, approver)
	return nil
}

// errKnownCredential: the authenticator is registered already.
var errKnownCredential = errors.New("this authenticator is registered already")

// beginWithCode records that approver's first key registration began with
// the enrollment code hash (spent when the key is added).
func (s *stepUp) beginWithCode(approver, hash string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pendingCodes[approver] = hash
}

// codeUsed reports whether hash added a first key of approver before.
func (s *stepUp) codeUsed(approver, hash string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.usedCodes[approver], hash)
}

// remove deletes approver's authenticator id; false when there is none.
// When the file cannot be written it keeps the authenticator and says why.
func (s *stepUp) remove(approver, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	before := s.creds[approver]
	after := slices.DeleteFunc(slices.Clone(before), func(c credential) bool { return credentialID(c.ID) == id })
	if len(after) == len(before) {
		return false, nil
	}
	s.creds[approver] = after
	if err := s.save(); err != nil {
		s.creds[approver] = before
		return false, err
	}
	return true, nil
}

// update records an authenticator's new sign count after an assertion.
func (s *stepUp) update(approver string, c *webauthn.Credential) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.creds[approver] {
		if slices.Equal(s.creds[approver][i].ID, c.ID) {
			s.creds[approver][i].Authenticator = c.Authenticator
		}
	}
	// The sign count only helps notice a cloned authenticator; a failed
	// write keeps it in memory (the next write carries it).
	_ = s.save()
}

// decodeJSONBody reads a small JSON body into v.
func decodeJSONBody(w http.ResponseWriter, r *http.Request, v any) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxRespondBody)
	return json.NewDecoder(r.Body).Decode(v)
}
