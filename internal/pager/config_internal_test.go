package pager

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/signoff-dev/signoff/internal/pager/pagertest"
	"github.com/signoff-dev/signoff/pkg/policy"
)

const testPDKey = "0123456789abcdef0123456789ABCDEF"

func keyFile(t *testing.T, key string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(p, []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigValidate(t *testing.T) {
	pd := func(mod func(*Config)) Config {
		c := Config{PagerSpec: policy.PagerSpec{Name: "pd", Kind: KindPagerDuty, RoutingKeyFile: "/run/secrets/pd"}}
		if mod != nil {
			mod(&c)
		}
		return c
	}
	og := func(mod func(*Config)) Config {
		c := Config{PagerSpec: policy.PagerSpec{Name: "og", Kind: KindOpsgenie, APIKeyEnv: "OG_KEY"}}
		if mod != nil {
			mod(&c)
		}
		return c
	}
	tests := []struct {
		name    string
		cfg     Config
		wantErr string // "" for valid
	}{
		{"a pagerduty pager with a key file is valid", pd(nil), ""},
		{"an opsgenie pager with a key variable is valid", og(nil), ""},
		{"an opsgenie pager in the eu region is valid", og(func(c *Config) { c.Region = "eu" }), ""},
		{"a pager without a name is refused", pd(func(c *Config) { c.Name = "" }), "no name"},
		{"a pager without a kind is refused", pd(func(c *Config) { c.Kind = "" }), "kind is required"},
		{"an unknown kind is refused", pd(func(c *Config) { c.Kind = "victorops" }), `kind "victorops"`},
		{"a pagerduty pager without a key is refused", pd(func(c *Config) { c.RoutingKeyFile = "" }), "routing_key_file or routing_key_env is required"},
		{"a key from both a file and a variable is refused", pd(func(c *Config) { c.RoutingKeyEnv = "X" }), "not both"},
		{"an opsgenie key on a pagerduty pager is refused", pd(func(c *Config) { c.APIKeyEnv = "X" }), "api_key_env is an opsgenie setting"},
		{"a pagerduty key on an opsgenie pager is refused", og(func(c *Config) { c.RoutingKeyFile = "/k" }), "pagerduty settings"},
		{"an unknown region is refused", og(func(c *Config) { c.Region = "ap" }), `region "ap"`},
		{"a plain http base url is refused", pd(func(c *Config) { c.BaseURL = "http://events.example.com" }), "must be https"},
		{"a plain http base url is allowed for tests", pd(func(c *Config) { c.BaseURL = "http://127.0.0.1:9"; c.AllowHTTP = true }), ""},
		{"a base url with a path is refused", pd(func(c *Config) { c.BaseURL = "https://events.pagerduty.com/v2/enqueue" }), "scheme and host only"},
		{"a base url with credentials is refused", pd(func(c *Config) { c.BaseURL = "https://u:p@events.pagerduty.com" }), "scheme and host only"},
		{"a ftp base url is refused", pd(func(c *Config) { c.BaseURL = "ftp://events.pagerduty.com" }), "must be https"},
		{"an unknown severity is refused", pd(func(c *Config) { c.Severity = "sev1" }), `severity "sev1"`},
		{"a source over 100 characters is refused", pd(func(c *Config) { c.Source = strings.Repeat("s", 101) }), "source is 101 characters"},
		{"a dedup prefix with a slash is refused", pd(func(c *Config) { c.DedupPrefix = "a/b" }), "dedup_prefix"},
		{"zero attempts after defaults means the default", pd(func(c *Config) { c.MaxAttempts = 0 }), ""},
		{"too many attempts are refused", pd(func(c *Config) { c.MaxAttempts = 50 }), "max_attempts 50"},
		{"a negative timeout is refused", pd(func(c *Config) { c.Timeout = -time.Second }), "must not be negative"},
		{"a min backoff above the max is refused", pd(func(c *Config) { c.MinBackoff = time.Minute }), "above max_backoff"},
		{"21 opsgenie tags are refused", og(func(c *Config) { c.Tags = make([]string, 21) }), "21 tags"},
		{"a 51-character tag is refused", og(func(c *Config) { c.Tags = []string{strings.Repeat("t", 51)} }), "tags:"},
		{"a responder without a type is refused", og(func(c *Config) { c.Responders = []string{"platform"} }), "responders:"},
		{"a responder of an unknown type is refused", og(func(c *Config) { c.Responders = []string{"group:x"} }), `type "group"`},
		{"responders of every documented type are valid", og(func(c *Config) {
			c.Responders = []string{"team:a", "user:b@example.com", "escalation:c", "schedule:d"}
		}), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.cfg
			c.setDefaults()
			err := c.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want ErrInvalidConfig containing %q", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), `"`+c.Name+`"`) && c.Name != "" {
				t.Fatalf("err %q does not name the pager", err)
			}
		})
	}
}

func TestDefaultsPickTheVendorsEndpoints(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"pagerduty", Config{PagerSpec: policy.PagerSpec{Kind: KindPagerDuty}}, "https://events.pagerduty.com"},
		{"opsgenie us", Config{PagerSpec: policy.PagerSpec{Kind: KindOpsgenie}}, "https://api.opsgenie.com"},
		{"opsgenie eu", Config{PagerSpec: policy.PagerSpec{Kind: KindOpsgenie, Region: "EU"}}, "https://api.eu.opsgenie.com"},
		{"an explicit base url wins", Config{PagerSpec: policy.PagerSpec{Kind: KindOpsgenie, Region: "eu", BaseURL: "https://og.internal"}}, "https://og.internal"},
	} {
		c := tt.cfg
		c.setDefaults()
		if c.BaseURL != tt.want {
			t.Errorf("%s: base url %q, want %q", tt.name, c.BaseURL, tt.want)
		}
	}
}

// TestTheDocumentedYAMLLoads decodes the example of docs/PAGING.md with
// unknown keys refused, and builds its pagers.
func TestTheDocumentedYAMLLoads(t *testing.T) {
	doc, err := os.ReadFile("../../docs/PAGING.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := bytes.Cut(doc, []byte("```yaml\n"))
	block, _, ok2 := bytes.Cut(rest, []byte("```"))
	if !ok || !ok2 {
		t.Fatal("docs/PAGING.md has no yaml block")
	}
	var file struct {
		Pagers map[string]Config `yaml:"pagers"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(block))
	dec.KnownFields(true)
	if err := dec.Decode(&file); err != nil {
		t.Fatalf("the documented YAML does not decode: %v", err)
	}
	if len(file.Pagers) < 2 {
		t.Fatalf("pagers = %v", file.Pagers)
	}
	t.Setenv("OPSGENIE_API_KEY", "og-key-1")
	for name, c := range file.Pagers {
		if c.RoutingKeyFile != "" {
			c.RoutingKeyFile = keyFile(t, testPDKey)
		}
		if c.APIKeyFile != "" {
			c.APIKeyFile = keyFile(t, "og-key-2")
		}
		file.Pagers[name] = c
	}
	ps, err := NewSet(file.Pagers, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range ps {
		if p.Name() != name {
			t.Fatalf("pager %q is named %q", name, p.Name())
		}
	}
}

func TestNewSetNamesTheBadPager(t *testing.T) {
	_, err := NewSet(map[string]Config{
		"good": {PagerSpec: policy.PagerSpec{Kind: KindPagerDuty, RoutingKeyFile: keyFile(t, testPDKey)}},
		"bad":  {PagerSpec: policy.PagerSpec{Kind: KindOpsgenie, APIKeyFile: filepath.Join(t.TempDir(), "missing")}},
	}, nil)
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), `"bad"`) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("err = %v", err)
	}
}

func TestSecretFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name    string
		file    string
		env     string
		want    string
		wantErr string
	}{
		{"a key with a trailing newline is trimmed", write("nl", "abc123\n"), "", "abc123", ""},
		{"a missing file is named", filepath.Join(dir, "nope"), "", "", "nope"},
		{"an empty file is refused", write("empty", " \n"), "", "", "is empty"},
		{"a file of two words is refused", write("two", "abc def"), "", "", "more than one word"},
		{"a large file is refused", write("big", strings.Repeat("a", 5000)), "", "", "larger than 4096"},
		{"a non-ASCII key is refused", write("utf", "clé"), "", "", "not printable ASCII"},
		{"an unset variable is named", "", "SIGNOFF_TEST_UNSET_VAR", "", "SIGNOFF_TEST_UNSET_VAR is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := loadSecret("test key", tt.file, tt.env)
			if tt.wantErr == "" {
				if err != nil || string(got) != tt.want {
					t.Fatalf("got %q, %v", string(got), err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
	s := secret("hunter2hunter2")
	for _, out := range []string{s.String(), s.GoString(), s.LogValue().String()} {
		if out != "[redacted]" {
			t.Fatalf("secret printed as %q", out)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		h    string
		want time.Duration
	}{
		{"", 0},
		{"3", 3 * time.Second},
		{" 120 ", 2 * time.Minute},
		{"0", 0},
		{"-5", 0},
		{"soon", 0},
		{"99999999999", 24 * time.Hour},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
	} {
		if got := retryAfter(tt.h, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tt.h, got, tt.want)
		}
	}
}

func TestBackoffGrowsWithJitterAndIsCapped(t *testing.T) {
	cl := &client{cfg: &Config{PagerSpec: policy.PagerSpec{MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second}}}
	seen := map[time.Duration]bool{}
	for attempt := 1; attempt <= 8; attempt++ {
		bound := min(100*time.Millisecond<<(attempt-1), time.Second)
		for range 200 {
			d := cl.backoff(attempt)
			if d < 50*time.Millisecond || d > bound {
				t.Fatalf("attempt %d: wait %v outside [50ms, %v]", attempt, d, bound)
			}
			seen[d] = true
		}
	}
	if len(seen) < 100 {
		t.Fatalf("only %d distinct waits: no jitter", len(seen))
	}
}

// TestRetriesWaitTheBackoffAndTheRetryAfter observes the waits through the
// client's sleep hook, so it checks them exactly without sleeping.
func TestRetriesWaitTheBackoffAndTheRetryAfter(t *testing.T) {
	fake := pagertest.NewPagerDuty(t, testPDKey)
	p, err := New(Config{PagerSpec: policy.PagerSpec{Name: "pd", Kind: KindPagerDuty, RoutingKeyFile: keyFile(t, testPDKey), BaseURL: fake.URL, AllowHTTP: true,
		MinBackoff: 100 * time.Millisecond, MaxBackoff: 10 * time.Second, MaxAttempts: 5}})
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	p.(*pagerDuty).sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	fake.Inject(pagertest.Fault{Status: 500}, pagertest.Fault{Status: 500}, pagertest.Fault{Status: 429, RetryAfter: 7 * time.Second}, pagertest.Fault{Status: 503})
	if _, err := p.Trigger(context.Background(), Page{RequestID: "r", Summary: "s"}); err != nil {
		t.Fatal(err)
	}
	if len(waits) != 4 {
		t.Fatalf("waits = %v, want 4", waits)
	}
	bounds := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 7 * time.Second, 800 * time.Millisecond}
	for i, w := range waits {
		lo := 50 * time.Millisecond
		if i == 2 {
			lo = 7 * time.Second
		}
		if w < lo || w > bounds[i] {
			t.Fatalf("wait %d = %v, want within [%v, %v] (all: %v)", i+1, w, lo, bounds[i], waits)
		}
	}
}

func TestDedupKey(t *testing.T) {
	if got := DedupKey("", "s-1", "01HV-abc_1:2"); got != "signoff-s-1:01HV-abc_1:2" {
		t.Fatalf("plain ids: %q", got)
	}
	if got := DedupKey("prod", "s1", "r1"); got != "prod-s1:r1" {
		t.Fatalf("prefix: %q", got)
	}
	// A request id is unique only within its session (red team AT F1):
	// another session's request of the same id has another key.
	if DedupKey("", "victim", "toolu_1") == DedupKey("", "attacker", "toolu_1") {
		t.Fatal("two sessions' requests of one id share a key")
	}
	// The session holds no ':' in the plain form, so moving the split
	// between the ids changes the key.
	if DedupKey("", "a", "b:c") == DedupKey("", "a:b", "c") {
		t.Fatal("the split between the ids is ambiguous")
	}
	odd := [][2]string{{"s", "a/b"}, {"s", "a%2Fb"}, {"s", "é"}, {"s", "a?b#c"}, {"s", "a b"}, {"s:x", "r"}, {"s.x", "r"}, {"", "r"}, {"s", "a\x00b"}, {"s\x00a", "b"}}
	seen := map[string]bool{}
	for _, ids := range odd {
		k := DedupKey("", ids[0], ids[1])
		if !strings.HasPrefix(k, "signoff.sha256.") || k != DedupKey("", ids[0], ids[1]) || seen[k] {
			t.Fatalf("DedupKey(%q, %q) = %q: not hashed, not stable, or colliding", ids[0], ids[1], k)
		}
		seen[k] = true
		// Ids chosen to look like the hashed form of another map elsewhere.
		forged := strings.ReplaceAll(strings.TrimPrefix(k, "signoff."), ".", "-")
		if DedupKey("", "s", forged) == k || DedupKey("", forged, "r") == k {
			t.Fatalf("ids forge the key of %q", ids)
		}
	}
	// The longest prefix with the longest ids fits both vendors.
	long := DedupKey(strings.Repeat("p", 64), strings.Repeat("s", 128), strings.Repeat("r", 128))
	if len(long) > pdMaxDedupKey || len(long) > ogMaxAlias {
		t.Fatalf("a maximal key is %d characters", len(long))
	}
}

func TestTruncateCountsCharacters(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdefgh", 5, "abcd…"},
		{"ééééé", 3, "éé…"},
	} {
		got := truncate(tt.in, tt.n)
		if got != tt.want || utf8.RuneCountInString(got) > tt.n {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestFitDetailsKeepsTheIdentifyingKeysFirst(t *testing.T) {
	d := map[string]string{"request_id": "r1", "link": "https://x/q/r1", "a": strings.Repeat("a", 60), "b": strings.Repeat("b", 60)}
	got := fitDetails(d, 100)
	n := 0
	for k, v := range got {
		n += utf8.RuneCountInString(k) + utf8.RuneCountInString(v)
	}
	if n > 100 || got["request_id"] != "r1" || got["link"] != d["link"] || got["truncated"] != "true" || got["b"] != "" {
		t.Fatalf("fitDetails = %v (%d characters)", got, n)
	}
	if all := fitDetails(map[string]string{"x": "y"}, 100); len(all) != 1 {
		t.Fatalf("details that fit were changed: %v", all)
	}
}

// Control characters are dropped; what a person cannot see or would
// misread — bidi controls, zero-width and tag characters, a no-break
// space, a mark striking a word through — is shown escaped, as the
// approver's card shows it (red team AG F7).
func TestCleanDropsControlsAndEscapesWhatCannotBeSeen(t *testing.T) {
	for _, tt := range []struct {
		in        string
		multiline bool
		want      string
	}{
		{"plain text", false, "plain text"},
		{"a\nb\tc", false, "a b c"},
		{"a\nb\tc", true, "a\nb\tc"},
		{"x\x1b[31my\x00z", true, "x[31myz"},
		{"abc\u202Efed", false, "abc<U+202E>fed"},
		{"rm\u00a0-rf x\u200b", false, "rm<U+00A0>-rf x<U+200B>"},
		{"ok\U000E0041\U000E0042", false, "ok<U+E0041><U+E0042>"},
		{"git push -\u0336-\u0336force", false, "git push -<U+0336>-<U+0336>force"},
		{"a\u2028b", true, "a<U+2028>b"},
		{"café Привет ’quoted’", false, "café Привет ’quoted’"},
		{"bad\xffutf8", false, "bad\uFFFDutf8"},
	} {
		if got := clean(tt.in, tt.multiline); got != tt.want {
			t.Errorf("clean(%q, %v) = %q, want %q", tt.in, tt.multiline, got, tt.want)
		}
	}
}
