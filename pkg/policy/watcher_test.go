package policy

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/testenv"
)

// writeAtomically replaces the file the way editors do: write a new file,
// rename it over the old one.
func writeAtomically(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func startWatcher(t *testing.T, w *Watcher) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run returned %v", err)
		}
	})
}

func waitFor(t *testing.T, ch <-chan *Policy) *Policy {
	t.Helper()
	select {
	case p := <-ch:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("no policy change seen")
		return nil
	}
}

func TestWatcherFirstLoad(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("mode: sometimes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var ce *ConfigError
	if _, err := NewWatcher(bad, nil, 0); !errors.As(err, &ce) || ce.Line != 1 {
		t.Errorf("bad first file: %v, want a ConfigError at line 1", err)
	}
	if _, err := NewWatcher(filepath.Join(dir, "missing.yaml"), nil, 0); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestWatcherSwapsOnChangeAndKeepsLastGood(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.yaml")
	writeAtomically(t, path, "mode: always-ask\n")
	logs := &testenv.LogBuffer{}
	w, err := NewWatcher(path, slog.New(slog.NewTextHandler(logs, nil)), 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	first := w.Current()
	changes := make(chan *Policy, 10)
	w.OnChange(func(p *Policy) { changes <- p })
	startWatcher(t, w)

	// An editor's rename-write is picked up.
	writeAtomically(t, path, "mode: yolo\n")
	p := waitFor(t, changes)
	if p.Mode() != ModeYolo || w.Current() != p || p.Version() == first.Version() {
		t.Fatalf("after change: mode %s, current is new %v", p.Mode(), w.Current() == p)
	}

	// A broken file is logged with its position; the last good policy stays.
	writeAtomically(t, path, "mode: yolo\nrules:\n  - { rule: bash, action: alow }\n")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), `policy.yaml:3:27: rules[0].action: unknown action \"alow\"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the rejection was not logged; logs:\n%s", logs)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if w.Current() != p {
		t.Fatal("a bad file replaced the policy")
	}
	if d := w.Current().Evaluate(Call{Tool: "bash", Arguments: cmd("ls")}); d.Action != Allow {
		t.Errorf("the last good policy (yolo) must stay in force, got %s", d.Action)
	}
	// Logged once, not once per poll.
	time.Sleep(50 * time.Millisecond)
	if n := strings.Count(logs.String(), "unknown action"); n != 1 {
		t.Errorf("the same bad file was logged %d times, want once", n)
	}

	// Fixing it swaps again.
	writeAtomically(t, path, "mode: auto-edit\n")
	if p := waitFor(t, changes); p.Mode() != ModeAutoEdit {
		t.Errorf("after fix: mode %s", p.Mode())
	}
	select {
	case p := <-changes:
		t.Errorf("unexpected extra change to %s", p.Mode())
	default:
	}
}

func TestWatcherReload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.yaml")
	writeAtomically(t, path, "mode: always-ask\n")
	w, err := NewWatcher(path, nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	w.OnChange(func(*Policy) { calls++ })
	if err := w.Reload(); err != nil || calls != 0 {
		t.Fatalf("unchanged file: err %v, %d callbacks", err, calls)
	}
	writeAtomically(t, path, "mode: yolo\n")
	if err := w.Reload(); err != nil || w.Current().Mode() != ModeYolo || calls != 1 {
		t.Fatalf("changed file: err %v, mode %s, %d callbacks", err, w.Current().Mode(), calls)
	}
	writeAtomically(t, path, "mode: [yolo\n")
	var ce *ConfigError
	if err := w.Reload(); !errors.As(err, &ce) || w.Current().Mode() != ModeYolo {
		t.Fatalf("bad file: err %v, mode %s", err, w.Current().Mode())
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := w.Reload(); !errors.Is(err, os.ErrNotExist) || w.Current().Mode() != ModeYolo {
		t.Fatalf("removed file: err %v", err)
	}
}

func TestWatcherCurrentIsSafeDuringReloads(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.yaml")
	writeAtomically(t, path, "mode: always-ask\n")
	w, err := NewWatcher(path, nil, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	startWatcher(t, w)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				d := w.Current().Evaluate(Call{Tool: "write_file", Arguments: args("path", "x")})
				if d.Action != Ask && d.Action != Allow {
					t.Errorf("unexpected %s", d.Action)
					return
				}
			}
		}()
	}
	for i := range 20 {
		mode := []string{"always-ask", "auto-edit"}[i%2]
		writeAtomically(t, path, "mode: "+mode+"\n# "+strings.Repeat("x", i)+"\n")
		if err := w.Reload(); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	wg.Wait()
}

func TestWatcherReportsEveryReloadOutcomeOnceAndTheRestoreOfAGoodFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.yaml")
	writeAtomically(t, path, "mode: always-ask\n")
	logs := &testenv.LogBuffer{}
	w, err := NewWatcher(path, slog.New(slog.NewTextHandler(logs, nil)), 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	good := w.Current().Version()
	events := make(chan ReloadEvent, 100)
	w.OnReload(func(ev ReloadEvent) { events <- ev })
	startWatcher(t, w)
	next := func() ReloadEvent {
		t.Helper()
		select {
		case ev := <-events:
			return ev
		case <-time.After(10 * time.Second):
			t.Fatal("no reload event in 10 s")
		}
		return ReloadEvent{}
	}

	// A bad file: one event with its error, not one per poll.
	writeAtomically(t, path, "mode: wild\n")
	if ev := next(); ev.Err == nil || ev.Changed || ev.Version != good {
		t.Fatalf("bad file: %+v, want its error with %s still in force", ev, good)
	}
	// The good content back: an event without error, no change, and a log
	// line that says the file is accepted again.
	writeAtomically(t, path, "mode: always-ask\n")
	if ev := next(); ev.Err != nil || ev.Changed || ev.Version != good {
		t.Fatalf("restored file: %+v, want ok with %s in force", ev, good)
	}
	if !strings.Contains(logs.String(), "policy file restored to the policy in force") {
		t.Errorf("restoring the good file logged nothing:\n%s", logs)
	}
	// A new good file: a change to its version.
	writeAtomically(t, path, "mode: yolo\n")
	ev := next()
	if ev.Err != nil || !ev.Changed || ev.Version == good || ev.Version != w.Current().Version() {
		t.Fatalf("new file: %+v, want a change to %s", ev, w.Current().Version())
	}
	// A missing file is rejected like a bad one.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if ev := next(); !errors.Is(ev.Err, os.ErrNotExist) {
		t.Fatalf("removed file: %+v", ev)
	}
	time.Sleep(50 * time.Millisecond)
	select {
	case ev := <-events:
		t.Errorf("unexpected extra event %+v (polls of an unchanged state are not events)", ev)
	default:
	}
	// An admin's reload is always an event, even when it changes nothing.
	writeAtomically(t, path, "mode: yolo\n")
	for ev := next(); ev.Err != nil || ev.Changed; ev = next() {
	}
	if err := w.Reload(); err != nil {
		t.Fatal(err)
	}
	if ev := next(); ev.Err != nil || ev.Changed {
		t.Errorf("forced reload of the file in force: %+v, want an ok event", ev)
	}
}
