package pager_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/internal/pager"
	"github.com/signoff-dev/signoff/internal/pager/pagertest"
	"github.com/signoff-dev/signoff/pkg/policy"
)

func TestKeysAreReadFromAnEnvironmentVariable(t *testing.T) {
	forEachVendor(t, func(t *testing.T, v *vendor) {
		env := "SIGNOFF_TEST_PAGER_KEY_" + strings.ToUpper(string(v.kind))
		key := map[pager.Kind]string{pager.KindPagerDuty: pdKey, pager.KindOpsgenie: ogKey}[v.kind]
		if err := os.Setenv(env, " "+key+"\n"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Unsetenv(env) })
		p, _ := v.newPager(t, func(c *pager.Config) {
			c.RoutingKeyFile, c.APIKeyFile = "", ""
			if c.Kind == pager.KindPagerDuty {
				c.RoutingKeyEnv = env
			} else {
				c.APIKeyEnv = env
			}
		})
		if _, err := p.Trigger(context.Background(), page("r-env")); err != nil {
			t.Fatal(err)
		}
		if len(v.incidents()) != 1 {
			t.Fatal("the key from the environment was not accepted by the fake")
		}
	})
}

func TestSecretsNeverReachLogsOrErrors(t *testing.T) {
	forEachVendor(t, func(t *testing.T, v *vendor) {
		key := map[pager.Kind]string{pager.KindPagerDuty: pdKey, pager.KindOpsgenie: ogKey}[v.kind]
		p, logs := v.newPager(t, nil)
		var texts []string
		check := func(what string, err error) {
			if err == nil {
				t.Fatalf("%s: no error", what)
			}
			texts = append(texts, what+": "+err.Error())
		}
		// The vendor echoes the key back in every error body.
		echo := fmt.Sprintf(`{"status":"invalid event","message":"bad key %s","errors":["routing_key %s"]}`, key, key)
		v.inject(pagertest.Fault{Status: 500, Body: echo}, pagertest.Fault{Status: 429, Body: echo},
			pagertest.Fault{Status: 500, Body: echo}, pagertest.Fault{Status: 500, Body: echo})
		_, err := p.Trigger(context.Background(), page("r-echo"))
		check("5xx echoing the key", err)
		v.inject(pagertest.Fault{Status: 400, Body: echo})
		check("400 echoing the key", p.Resolve(context.Background(), "k"))
		v.inject(pagertest.Fault{Status: 400, Body: "plain text " + key})
		check("non-JSON body echoing the key", p.Resolve(context.Background(), "k"))
		v.inject(pagertest.Fault{Status: 202, Body: `{"key":"` + key + `"}`})
		_, err = p.Trigger(context.Background(), page("r-echo2"))
		check("202 without the expected body", err)
		v.inject(pagertest.Fault{Status: 500, Body: echo})
		check("health", p.CheckHealth(context.Background()))

		// Bad key files: the error names the file, never its content.
		for name, content := range map[string]string{
			"two words":    key + " " + key,
			"too long":     strings.Repeat(key, 200),
			"wrong length": key + "x",
		} {
			path := filepath.Join(t.TempDir(), "key")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			c := pager.Config{PagerSpec: policy.PagerSpec{Name: "x", Kind: v.kind, AllowHTTP: true, BaseURL: "http://127.0.0.1:1"}}
			if v.kind == pager.KindPagerDuty {
				c.RoutingKeyFile = path
			} else {
				c.APIKeyFile = path
				if name == "wrong length" {
					continue // Opsgenie keys have no documented length
				}
			}
			_, err := pager.New(c)
			if !errors.Is(err, pager.ErrInvalidConfig) {
				t.Fatalf("%s: err = %v", name, err)
			}
			texts = append(texts, name+": "+err.Error())
		}
		texts = append(texts, logs.String(), fmt.Sprintf("%v %+v %#v", p, p, p))
		for _, s := range texts {
			if strings.Contains(s, key) || strings.Contains(s, key[:16]) {
				t.Fatalf("the key leaked:\n%s", s)
			}
		}
		if !strings.Contains(strings.Join(texts, "\n"), "[redacted]") {
			t.Fatal("the echoed key was not replaced by [redacted]")
		}
	})
}
