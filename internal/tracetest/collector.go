package tracetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Span is one span the collector received, flattened from OTLP JSON.
type Span struct {
	Service      string // the resource's service.name
	TraceID      string // hex
	SpanID       string
	ParentSpanID string // "" for a root span
	Name         string
	Kind         int // OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer
	Attributes   map[string]string
	Links        []Link
	StatusCode   int // 0 unset, 1 ok, 2 error
}

// Link is a span link.
type Link struct{ TraceID, SpanID string }

// Collector is a running collector process.
type Collector struct {
	GRPC, HTTP string // host:port of its OTLP endpoints

	mu    sync.Mutex
	spans []Span
	errs  []error
}

var (
	buildOnce sync.Once
	buildBin  string
	buildErr  error
)

// build compiles ./otelcol into a temporary directory, once per process.
func build() (string, error) {
	buildOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		dir := filepath.Join(filepath.Dir(file), "otelcol")
		out, err := os.MkdirTemp("", "signoff-otelcol-")
		if err != nil {
			buildErr = err
			return
		}
		buildBin = filepath.Join(out, "otelcol")
		goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goBin); err != nil {
			goBin = "go"
		}
		cmd := exec.Command(goBin, "build", "-o", buildBin, ".")
		cmd.Dir = dir
		if msg, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("tracetest: build the collector in %s: %v\n%s", dir, err, msg)
		}
	})
	return buildBin, buildErr
}

// Start builds (once) and starts a collector for t, stopped by t.Cleanup.
// It fails t when the collector cannot be built or does not start.
func Start(t testing.TB) *Collector {
	t.Helper()
	bin, err := build()
	if err != nil {
		t.Fatalf("%v", err)
	}
	c := &Collector{GRPC: freeAddr(t), HTTP: freeAddr(t)}
	cmd := exec.Command(bin, "-grpc", c.GRPC, "-http", c.HTTP)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("tracetest: start the collector: %v", err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		_ = cmd.Wait()
	})
	go func() {
		defer close(done)
		c.read(stdout)
	}()
	ready := make(chan string, 1)
	var log bytes.Buffer
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- ""
			} else {
				log.WriteString(sc.Text() + "\n")
			}
		}
		close(ready)
	}()
	select {
	case _, ok := <-ready:
		if !ok {
			t.Fatalf("tracetest: the collector exited before it was ready:\n%s", log.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("tracetest: the collector was not ready within 30 s")
	}
	return c
}

func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("tracetest: free port: %v", err)
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// read parses the collector's output, one OTLP JSON batch a line.
func (c *Collector) read(r interface{ Read([]byte) (int, error) }) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		spans, err := parse(sc.Bytes())
		c.mu.Lock()
		c.spans = append(c.spans, spans...)
		if err != nil {
			c.errs = append(c.errs, err)
		}
		c.mu.Unlock()
	}
}

// Spans returns the spans received so far.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Span(nil), c.spans...)
}

// Wait returns the spans received once done holds of them, or fails t
// after timeout.
func (c *Collector) Wait(t testing.TB, timeout time.Duration, done func([]Span) bool) []Span {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		spans := c.Spans()
		c.mu.Lock()
		errs := c.errs
		c.mu.Unlock()
		if len(errs) > 0 {
			t.Fatalf("tracetest: unreadable collector output: %v", errs)
		}
		if done(spans) {
			return spans
		}
		select {
		case <-ctx.Done():
			var names []string
			for _, s := range spans {
				names = append(names, s.Service+"/"+s.Name)
			}
			t.Fatalf("tracetest: the spans awaited did not arrive within %s; got %d: %s", timeout, len(spans), strings.Join(names, ", "))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// otlp is the part of OTLP JSON (ExportTraceServiceRequest) the tests read.
type otlp struct {
	ResourceSpans []struct {
		Resource struct {
			Attributes []kv `json:"attributes"`
		} `json:"resource"`
		ScopeSpans []struct {
			Spans []struct {
				TraceID      string `json:"traceId"`
				SpanID       string `json:"spanId"`
				ParentSpanID string `json:"parentSpanId"`
				Name         string `json:"name"`
				Kind         int    `json:"kind"`
				Attributes   []kv   `json:"attributes"`
				Links        []struct {
					TraceID string `json:"traceId"`
					SpanID  string `json:"spanId"`
				} `json:"links"`
				Status struct {
					Code int `json:"code"`
				} `json:"status"`
			} `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
}

type kv struct {
	Key   string `json:"key"`
	Value struct {
		String *string          `json:"stringValue"`
		Bool   *bool            `json:"boolValue"`
		Int    *json.RawMessage `json:"intValue"`
	} `json:"value"`
}

func (a kv) text() string {
	switch {
	case a.Value.String != nil:
		return *a.Value.String
	case a.Value.Bool != nil:
		return strconv.FormatBool(*a.Value.Bool)
	case a.Value.Int != nil:
		return strings.Trim(string(*a.Value.Int), `"`)
	}
	return ""
}

func attrs(kvs []kv) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, a := range kvs {
		m[a.Key] = a.text()
	}
	return m
}

func parse(line []byte) ([]Span, error) {
	var doc otlp
	if err := json.Unmarshal(line, &doc); err != nil {
		return nil, fmt.Errorf("%w: %.200s", err, line)
	}
	var out []Span
	for _, rs := range doc.ResourceSpans {
		service := attrs(rs.Resource.Attributes)["service.name"]
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				sp := Span{Service: service, TraceID: s.TraceID, SpanID: s.SpanID, ParentSpanID: s.ParentSpanID,
					Name: s.Name, Kind: s.Kind, Attributes: attrs(s.Attributes), StatusCode: s.Status.Code}
				for _, l := range s.Links {
					sp.Links = append(sp.Links, Link{TraceID: l.TraceID, SpanID: l.SpanID})
				}
				out = append(out, sp)
			}
		}
	}
	return out, nil
}
