package broker

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// modeTable holds the admin's mode overrides, replicated to every replica
// through the ModesBucket key-value bucket. Keys are "session.<id>" and
// "agent.<type>" with the id base64url-encoded (session ids may hold
// characters that key-value keys may not).
type modeTable struct {
	mu       sync.RWMutex
	sessions map[string]policy.Mode
	agents   map[string]policy.Mode
	kv       jetstream.KeyValue
	watcher  jetstream.KeyWatcher
	// shadow follows the bucket's shadow key (shadow.go).
	shadow shadowPolicy
	// canary follows the bucket's canary keys (canary.go).
	canary canaryState
}

func newModeTable() *modeTable {
	return &modeTable{sessions: map[string]policy.Mode{}, agents: map[string]policy.Mode{}}
}

func sessionModeKey(id string) string {
	return "session." + base64.RawURLEncoding.EncodeToString([]byte(id))
}
func agentModeKey(t string) string { return "agent." + base64.RawURLEncoding.EncodeToString([]byte(t)) }

// modeFor returns the override for a call: the session's, else the agent
// type's, else "" (the policy decides).
func (t *modeTable) modeFor(sessionID, agentType string) policy.Mode {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if len(t.sessions) == 0 && len(t.agents) == 0 {
		return ""
	}
	if m, ok := t.sessions[sessionID]; ok {
		return m
	}
	if agentType != "" {
		return t.agents[agentType]
	}
	return ""
}

// ModeFor is modeFor: the engine's engine.Modes.
func (t *modeTable) ModeFor(sessionID, agentType string) policy.Mode {
	return t.modeFor(sessionID, agentType)
}

func (t *modeTable) apply(key string, value []byte, deleted bool) error {
	kind, enc, ok := strings.Cut(key, ".")
	if !ok {
		return fmt.Errorf("mode key %q: want session.<id> or agent.<type>", key)
	}
	id, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return fmt.Errorf("mode key %q: %w", key, err)
	}
	var target map[string]policy.Mode
	switch kind {
	case "session":
		target = t.sessions
	case "agent":
		target = t.agents
	default:
		return fmt.Errorf("mode key %q: unknown kind %q", key, kind)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if deleted {
		delete(target, string(id))
		return nil
	}
	m, err := policy.ParseMode(string(value))
	if err != nil {
		return fmt.Errorf("mode key %q: %w", key, err)
	}
	target[string(id)] = m
	return nil
}

// start loads every override and returns once the table is in sync, so a
// replica never serves with a stale (possibly more permissive) mode.
func (t *modeTable) start(ctx context.Context, kv jetstream.KeyValue, log *slog.Logger) error {
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return fmt.Errorf("watch %s: %w", ModesBucket, err)
	}
	for e := range w.Updates() {
		if e == nil {
			break // initial values done
		}
		t.entry(e, log)
	}
	t.kv, t.watcher = kv, w
	return nil
}

// follow applies updates until ctx is done.
func (t *modeTable) follow(ctx context.Context, log *slog.Logger) {
	if t.watcher == nil {
		return
	}
	defer t.watcher.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-t.watcher.Updates():
			if !ok {
				return
			}
			if e != nil {
				t.entry(e, log)
			}
		}
	}
}

func (t *modeTable) entry(e jetstream.KeyValueEntry, log *slog.Logger) {
	deleted := e.Operation() != jetstream.KeyValuePut
	if e.Key() == shadowKey {
		t.shadow.apply(e.Value(), deleted, log)
		return
	}
	if isCanaryKey(e.Key()) {
		t.canary.entry(e, log)
		return
	}
	if err := t.apply(e.Key(), e.Value(), deleted); err != nil {
		log.Error("ignoring bad mode override", "err", err)
	}
}
