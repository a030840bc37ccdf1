package policy

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
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
// swapped in, on the goroutine that performed the reload.
func (w *Watcher) OnChange(fn func(*Policy)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onChange = append(w.onChange, fn)
}

// Run polls the file until ctx is done, then returns nil.
func (w *Watcher) Run(ctx context.Context) error {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := w.reload(); err != nil {
				w.mu.Lock()
				report := err.Error() != w.lastErr
				w.lastErr = err.Error()
				w.mu.Unlock()
				if report {
					w.logger.Error("policy file rejected; the last good policy stays in force",
						"file", w.path, "error", err.Error(), "version", w.Current().Version())
				}
			}
		}
	}
}

// Reload reads the file now (an admin's "reload policy"). It returns the
// [*ConfigError] or I/O error when the file is unusable, in which case the
// current policy stays in force; an unchanged file is not an error.
func (w *Watcher) Reload() error {
	err := w.reload()
	if err != nil {
		w.logger.Error("policy reload failed; the last good policy stays in force",
			"file", w.path, "error", err.Error(), "version", w.Current().Version())
	}
	return err
}

func (w *Watcher) reload() error {
	data, err := readPolicyFile(w.path)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	w.mu.Lock()
	if sum == w.hash {
		w.lastErr = ""
		w.mu.Unlock()
		return nil
	}
	p, err := Parse(data, w.path)
	if err != nil {
		w.mu.Unlock()
		return err
	}
	old := w.cur.Swap(p)
	w.hash = sum
	w.lastErr = ""
	callbacks := slices.Clone(w.onChange)
	w.mu.Unlock()

	w.logger.Info("policy reloaded", "file", w.path, "old_version", old.Version(), "version", p.Version())
	for _, fn := range callbacks {
		fn(p)
	}
	return nil
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
