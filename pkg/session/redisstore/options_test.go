package redisstore

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/session"
)

func TestParseSentinelURL(t *testing.T) {
	tests := []struct {
		name                       string
		url                        string
		addrs                      []string
		master, user, pass         string
		db                         int
		sentinelUser, sentinelPass string
		tls                        bool
	}{
		{
			name:  "several sentinels, a master and a database in the path",
			url:   "redis+sentinel://:secret@10.0.0.1:26379,10.0.0.2:26380/mymaster/2",
			addrs: []string{"10.0.0.1:26379", "10.0.0.2:26380"}, master: "mymaster", pass: "secret", db: 2,
		},
		{
			name:  "ACL user, database and sentinel credentials in the query",
			url:   "rediss+sentinel://app:pw@s1:26379/mymaster?db=3&sentinel_username=sen&sentinel_password=spw",
			addrs: []string{"s1:26379"}, master: "mymaster", user: "app", pass: "pw", db: 3,
			sentinelUser: "sen", sentinelPass: "spw", tls: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := url.Parse(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			fo, err := parseSentinelURL(u)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(fo.SentinelAddrs, tc.addrs) || fo.MasterName != tc.master || fo.Username != tc.user ||
				fo.Password != tc.pass || fo.DB != tc.db || fo.SentinelUsername != tc.sentinelUser ||
				fo.SentinelPassword != tc.sentinelPass || (fo.TLSConfig != nil) != tc.tls {
				t.Errorf("parsed %+v", fo)
			}
		})
	}
}

func TestParseClusterURL(t *testing.T) {
	u, err := url.Parse("rediss+cluster://app:pw@n1:7000,n2:7001")
	if err != nil {
		t.Fatal(err)
	}
	co, err := parseClusterURL(u)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(co.Addrs, []string{"n1:7000", "n2:7001"}) || co.Username != "app" || co.Password != "pw" ||
		co.TLSConfig == nil || co.TLSConfig.ServerName != "n1" {
		t.Errorf("parsed %+v", co)
	}
}

func TestBadURLsAreInvalidAndHideThePassword(t *testing.T) {
	for _, raw := range []string{
		"redis+sentinel://:hunter2@s1:26379",
		"redis+sentinel://:hunter2@s1:26379/m?colour=blue",
		"redis+cluster://:hunter2@n1:7000/0",
		"redis://:hunter2@n1:notaport",
		"redis://:hunter2@n1:6379/notadb",
	} {
		o := Options{URL: raw}
		o.setDefaults()
		_, err := o.newClient()
		if !errors.Is(err, session.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", raw, err)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error shows the password: %v", raw, err)
		}
	}
}
