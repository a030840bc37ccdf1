package testenv_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"

	"github.com/signoff-dev/signoff/internal/testenv"
)

func TestRedisServesAndSurvivesARestartWithAOF(t *testing.T) {
	srv := testenv.Redis(t, testenv.WithAOF())
	c := srv.Client()
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}

	srv.Stop()
	if err := c.Get(ctx, "k").Err(); err == nil {
		t.Fatalf("GET on a stopped server succeeded")
	}
	srv.Start()
	got, err := c.Get(ctx, "k").Result()
	if err != nil || got != "v" {
		t.Fatalf("GET after restart = %q, %v; want %q", got, err, "v")
	}
}

func TestRedisWithoutAOFForgetsDataOnRestart(t *testing.T) {
	srv := testenv.Redis(t)
	c := srv.Client()
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	srv.Stop()
	srv.Start()
	if err := c.Get(ctx, "k").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET after restart: err = %v, want redis.Nil", err)
	}
}

func TestRedisPauseMakesCommandsTimeOutUntilResume(t *testing.T) {
	srv := testenv.Redis(t)
	c := srv.Client()
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("PING: %v", err)
	}

	srv.Pause()
	c2 := redis.NewClient(&redis.Options{Addr: srv.Addr(), ReadTimeout: 200 * time.Millisecond, MaxRetries: -1, DisableIdentity: true})
	defer c2.Close()
	if err := c2.Ping(context.Background()).Err(); err == nil {
		t.Fatalf("PING on a paused server succeeded")
	}
	srv.Resume()
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("PING after resume: %v", err)
	}
}

func TestRedisClusterModeRefusesCrossSlotScripts(t *testing.T) {
	srv := testenv.Redis(t, testenv.WithCluster())
	c := srv.ClusterClient()
	ctx := context.Background()

	// Redis 7 checks slots strictly only for scripts that declare a shebang;
	// scripts without one keep the lax legacy behaviour.
	sameSlot := redis.NewScript("#!lua\n" + `redis.call('SET', KEYS[1], 1); return redis.call('SET', KEYS[1] .. ':x', 2)`)
	if err := sameSlot.Run(ctx, c, []string{"{tag}:a"}).Err(); err != nil {
		t.Fatalf("script on one slot: %v", err)
	}
	crossSlot := redis.NewScript("#!lua\n" + `redis.call('SET', KEYS[1], 1); return redis.call('SET', 'other-key', 2)`)
	err := crossSlot.Run(ctx, c, []string{"{tag}:a"}).Err()
	if err == nil || !strings.Contains(err.Error(), "slot") {
		t.Fatalf("cross-slot script: err = %v, want a slot error", err)
	}
}

func TestNATSServesJetStreamAndKeepsStreamsAcrossRestart(t *testing.T) {
	srv := testenv.NATS(t)
	nc := srv.Connect(t, nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
		t.Fatalf("create stream: %v", err)
	}
	if _, err := js.Publish(ctx, "t.1", []byte("hello")); err != nil {
		t.Fatalf("publish: %v", err)
	}

	url := srv.ClientURL()
	srv.Shutdown()
	srv.Restart()
	if srv.ClientURL() != url {
		t.Fatalf("ClientURL after restart = %q, want %q", srv.ClientURL(), url)
	}
	nc2 := srv.Connect(t)
	js2, err := jetstream.New(nc2)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	st, err := js2.Stream(ctx, "T")
	if err != nil {
		t.Fatalf("stream after restart: %v", err)
	}
	msg, err := st.GetMsg(ctx, 1)
	if err != nil || string(msg.Data) != "hello" {
		t.Fatalf("message after restart = %v, %v; want hello", msg, err)
	}
}

func TestSentinelKnowsTheMasterAndItsReplica(t *testing.T) {
	master := testenv.Redis(t)
	testenv.Redis(t, testenv.WithReplicaOf(master))
	sentinel := testenv.Sentinel(t, master, "m1")
	c := sentinel.Client()
	ctx := context.Background()
	addr, err := c.Do(ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", "m1").StringSlice()
	if err != nil || len(addr) != 2 || "127.0.0.1:"+addr[1] != master.Addr() {
		t.Fatalf("SENTINEL GET-MASTER-ADDR-BY-NAME = %v, %v; want %s", addr, err, master.Addr())
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		replicas, err := c.Do(ctx, "SENTINEL", "REPLICAS", "m1").Slice()
		if err == nil && len(replicas) == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("SENTINEL REPLICAS = %v, %v; want the replica", replicas, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// fatalTB records Fatalf and Skip calls instead of ending the test.
type fatalTB struct {
	testing.TB
	fatal   string
	skipped bool
}

type stop struct{}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	panic(stop{})
}
func (f *fatalTB) Skip(...any)          { f.skipped = true; panic(stop{}) }
func (f *fatalTB) Skipf(string, ...any) { f.skipped = true; panic(stop{}) }
func (f *fatalTB) SkipNow()             { f.skipped = true; panic(stop{}) }

func TestRedisFailsWithAnInstallHintWhenTheBinaryIsMissing(t *testing.T) {
	t.Setenv(testenv.RedisServerEnv, filepath.Join(t.TempDir(), "no-redis-server"))
	f := &fatalTB{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(stop); !ok {
					panic(r)
				}
			}
		}()
		testenv.Redis(f)
	}()
	if f.skipped {
		t.Fatal("Redis skipped the test; it must fail it")
	}
	if !strings.Contains(f.fatal, "redis-server not found: run `make test` (installs it) or `apt-get install redis-server`") {
		t.Fatalf("Fatalf message = %q, want the install hint", f.fatal)
	}
}
