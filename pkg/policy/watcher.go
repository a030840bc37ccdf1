package policy

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultWatchInterval is how often a [Watcher] polls its file when no
// interval is given.
const DefaultWatchInterval = time.Second

// Watcher keeps the policy of a file current. It polls the file's content
// (not its modification time or inode, so editors that write a new file and
// rename it over the old one are seen) and swaps in a new [Policy] when the
// content changes and parses; a bad file is logged with its file:line:col
// error and the last good policy stays in force.
//
// Current is lock-free and safe for concurrent use; Run, Reload and
// OnChange may be called from any goroutine.
type Watcher struct {
	path     string
	logger   *slog.Logger
	interval time.Duration

	cur atomic.Pointer[Policy]

	mu       sync.Mutex // serializes reloads; guards the fields below
	hash     [32]byte   // content hash of the policy in force
	lastErr  string     // last reported failure, so a bad file is logged once
	onChange []func(*Policy)
	onReload []func(ReloadEvent)
}

// ReloadEvent is the outcome of one reload of a [Watcher]'s file that
// operators should see: a new policy in force, a file rejected, or the file
// in force restored after a rejection. Polling an unchanged file is not an
// event; an admin's [Watcher.Reload] always is.
type ReloadEvent struct {
	// Err is why the file was rejected (the policy in force did not
	// change), or nil.
	Err error
	// Changed reports that a new policy was swapped in.
	Changed bool
	// Version is the version of the policy in force after the event.
	Version string
}

// NewWatcher loads the policy file once and returns a watcher for it; it
// fails when that first load fails. A nil logger discards logs; an interval
// ≤ 0 means [DefaultWatchInterval].
func NewWatcher(path string, logger *slog.Logger, interval time.Duration) (*Watcher, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if interval <= 0 {
		interval = DefaultWatchInterval
	}
	data, err := readPolicyFile(path)
	if err != nil {
		return nil, err
	}
	p, err := Parse(data, path)
	if err != nil {
		return nil, err
	}
	w := &Watcher{path: path, logger: logger, interval: interval, hash: sha256.Sum256(data)}
	w.cur.Store(p)
	return w, nil
}

// Current returns the policy in force. It never returns nil.
func (w *Watcher) Current() *Policy { return w.cur.Load() }

// OnChange registers fn to be called with each new policy after it is
// swapped in, on the goroutine that performed the reload. Reloads are
// serialized and the callbacks run within one: fn must not call the
// watcher's Reload, OnChange or OnReload.
func (w *Watcher) OnChange(fn func(*Policy)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onChange = append(w.onChange, fn)
}

// OnReload registers fn to be called with every [ReloadEvent], in order,
// on the goroutine that performed the reload (for metrics). As for
// OnChange, fn must not call back into the watcher.
func (w *Watcher) OnReload(fn func(ReloadEvent)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onReload = append(w.onReload, fn)
}

// Run polls the file until ctx is done, then returns nil. A rejected file
// is logged and reported once per distinct error, not on every poll.
func (w *Watcher) Run(ctx context.Context) error {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			w.reload(false)
		}
	}
}

// Reload reads the file now (an admin's "reload policy"). It returns the
// [*ConfigError] or I/O error when the file is unusable, in which case the
// current policy stays in force; an unchanged file is not an error.
func (w *Watcher) Reload() error {
	return w.reload(true)
}

// reload reads the file and swaps in its policy when it changed. forced
// (an admin's request) reports every outcome; a poll reports changes only.
func (w *Watcher) reload(forced bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	data, err := readPolicyFile(w.path)
	var sum [32]byte
	if err == nil {
		sum = sha256.Sum256(data)
		if sum == w.hash {
			// The file in force: unchanged, or restored after a rejection.
			restored := w.lastErr != ""
			w.lastErr = ""
			if restored {
				w.logger.Info("policy file restored to the policy in force; it is accepted again",
					"file", w.path, "version", w.Current().Version())
			}
			if restored || forced {
				w.notify(ReloadEvent{Version: w.Current().Version()})
			}
			return nil
		}
		var p *Policy
		if p, err = Parse(data, w.path); err == nil {
			old := w.cur.Swap(p)
			w.hash = sum
			w.lastErr = ""
			w.logger.Info("policy reloaded", "file", w.path, "old_version", old.Version(), "version", p.Version())
			for _, fn := range w.onChange {
				fn(p)
			}
			w.notify(ReloadEvent{Changed: true, Version: p.Version()})
			return nil
		}
	}
	if !forced && err.Error() == w.lastErr {
		return err // reported when first seen
	}
	w.lastErr = err.Error()
	msg := "policy file rejected; the last good policy stays in force"
	if forced {
		msg = "policy reload failed; the last good policy stays in force"
	}
	w.logger.Error(msg, "file", w.path, "err", err.Error(), "version", w.Current().Version())
	w.notify(ReloadEvent{Err: err, Version: w.Current().Version()})
	return err
}

// notify calls the OnReload callbacks; w.mu is held.
func (w *Watcher) notify(ev ReloadEvent) {
	for _, fn := range w.onReload {
		fn(ev)
	}
}

// readPolicyFile reads a policy file, refusing files over MaxFileSize.
func readPolicyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load policy: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("load policy %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, &ConfigError{File: path, Msg: fmt.Sprintf("file is larger than %d bytes", MaxFileSize)}
	}
	return data, nil
}
