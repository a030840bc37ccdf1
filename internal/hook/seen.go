package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// seenState is the hooks' memory of the hard rejections their agent heard
// of since its last turn that ended a stop (pkg/client's Seen), kept
// between hook processes in a small file per session, so that the hook's
// new turns are tracked: a turn ends a stop only when it names every
// rejection behind it (docs/STATE.md "Hard stops and turns").
//
// The file is $XDG_STATE_HOME/signoff/seen-<hash>.json (default
// ~/.local/state), <hash> from the session id, 0600 in a 0700 directory.
// Hook processes of one session may run at once (parallel tool calls):
// each writes with an atomic rename, merging what the file holds then. A
// write lost in a race may lose an id, which keeps a stop (the next
// hard_stop deny names it again), the safe side; or keep one a turn had
// dropped, which is harmless (a turn may name more than the stop holds).
type seenState struct {
	path      string
	sessionID string
	loaded    []string // what the file held when the process began
	err       error    // the file could not be read: nothing was loaded
}

type seenDoc struct {
	V         int      `json:"v"`
	SessionID string   `json:"session_id"`
	Seen      []string `json:"seen"`
}

// seenPath is the state file of sessionID.
func seenPath(sessionID string) (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no state directory: XDG_STATE_HOME is not set and %w", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("state directory %q is not an absolute path (XDG_STATE_HOME)", dir)
	}
	sum := sha256.Sum256([]byte(sessionID))
	return filepath.Join(filepath.Clean(dir), "signoff", "seen-"+hex.EncodeToString(sum[:16])+".json"), nil
}

// loadSeen reads the state of sessionID; st.err says why it could not be.
func loadSeen(sessionID string) *seenState {
	st := &seenState{sessionID: sessionID}
	if st.path, st.err = seenPath(sessionID); st.err == nil {
		st.loaded, st.err = st.read()
	}
	return st
}

// read returns the ids the file holds; none when it does not exist.
func (st *seenState) read() ([]string, error) {
	fi, err := os.Lstat(st.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: want a regular file only its owner can read and write (0600), found %v", st.path, fi.Mode())
	}
	data, err := os.ReadFile(st.path)
	if err != nil {
		return nil, err
	}
	var doc seenDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", st.path, err)
	}
	if doc.V != 1 || doc.SessionID != st.sessionID || len(doc.Seen) > messages.MaxCancelIDs {
		return nil, fmt.Errorf("%s: not the state of session %q (v %d, session %q, %d ids)", st.path, st.sessionID, doc.V, doc.SessionID, len(doc.Seen))
	}
	for i, id := range doc.Seen {
		if err := messages.ValidateToken(fmt.Sprintf("seen[%d]", i), id); err != nil {
			return nil, fmt.Errorf("%s: %w", st.path, err)
		}
	}
	return doc.Seen, nil
}

// keep writes now, what the process's client holds: the ids it added
// since loading, and without those it dropped (a turn that ended a
// stop), merged with what the file holds now. A file that cannot be read
// is replaced by now: what it held is lost, which keeps a stop until the
// agent hears of its rejections again (the safe side).
func (st *seenState) keep(now []string) error {
	if st.path == "" {
		return st.err
	}
	cur, rerr := st.read()
	var out []string
	for _, id := range slices.Concat(cur, now) {
		dropped := slices.Contains(st.loaded, id) && !slices.Contains(now, id)
		if !dropped && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	if n := len(out) - messages.MaxCancelIDs; n > 0 {
		out = out[n:]
	}
	if rerr == nil && slices.Equal(out, cur) {
		return nil
	}
	return st.write(out)
}

// write replaces the file with ids, atomically.
func (st *seenState) write(ids []string) error {
	dir := filepath.Dir(st.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	data, _ := json.Marshal(seenDoc{V: 1, SessionID: st.sessionID, Seen: ids})
	f, err := os.CreateTemp(dir, ".seen-*") // 0600
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), st.path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// forget removes the state file (the session ended).
func (st *seenState) forget() {
	if st.path != "" {
		_ = os.Remove(st.path)
	}
}
