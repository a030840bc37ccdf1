package tracing

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of every span Signoff makes.
const ScopeName = "github.com/signoff-dev/signoff"

// Protocols of OTEL_EXPORTER_OTLP_PROTOCOL that Signoff exports with.
const (
	ProtocolGRPC = "grpc"
	ProtocolHTTP = "http/protobuf"
)

// Config configures [Setup].
type Config struct {
	// Endpoint is the OTLP endpoint's URL (--otlp-endpoint), for example
	// http://otel-collector:4318 (HTTP) or http://otel-collector:4317
	// (gRPC); https:// turns TLS on. Over HTTP a URL without a path gets
	// /v1/traces, as OTEL_EXPORTER_OTLP_ENDPOINT does. Empty: the
	// standard variables decide, and without them export is off.
	Endpoint string
	// Service is the service.name of the process's spans unless
	// OTEL_SERVICE_NAME says otherwise.
	Service string
	// Version is service.version.
	Version string
	// Getenv reads the environment (default os.Getenv; tests replace it).
	Getenv func(string) string
	// Logger says that export is on, and why a flush failed (default
	// slog.Default()).
	Logger *slog.Logger
}

// Provider exports the spans of one process. A nil *Provider is tracing
// off: its Tracer is nil and Shutdown does nothing.
type Provider struct {
	tp       *sdktrace.TracerProvider
	log      *slog.Logger
	Protocol string // the protocol it exports with
}

// Setup returns the process's provider, or nil when export is off. An
// endpoint that is not an http(s) URL or an unknown protocol is an error
// that names the setting.
func Setup(ctx context.Context, cfg Config) (*Provider, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if !enabled(cfg.Endpoint, getenv) {
		return nil, nil
	}
	proto := firstSet(getenv, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
	if proto == "" {
		proto = ProtocolHTTP
	}
	exp, err := exporter(ctx, cfg.Endpoint, proto)
	if err != nil {
		return nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(cfg.Service), semconv.ServiceVersion(cfg.Version)),
		resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithHost())
	if err != nil && res == nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	log.Info("exporting traces over OTLP", "protocol", proto)
	return &Provider{tp: tp, log: log, Protocol: proto}, nil
}

// enabled reports whether spans are exported: an endpoint is given or
// named by the standard variables, and the SDK is not disabled.
func enabled(endpoint string, getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	if x := getenv("OTEL_TRACES_EXPORTER"); x != "" && !strings.Contains(x, "otlp") {
		return false
	}
	return endpoint != "" || firstSet(getenv, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

func firstSet(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(getenv(n)); v != "" {
			return v
		}
	}
	return ""
}

// exporter is the OTLP exporter of proto to endpoint ("" : the one the
// standard variables name).
func exporter(ctx context.Context, endpoint, proto string) (sdktrace.SpanExporter, error) {
	var u *url.URL
	if endpoint != "" {
		var err error
		if u, err = ParseEndpoint(endpoint); err != nil {
			return nil, err
		}
	}
	switch proto {
	case ProtocolHTTP:
		var opts []otlptracehttp.Option
		if u != nil {
			if u.Path == "" || u.Path == "/" {
				u.Path = "/v1/traces"
			}
			opts = append(opts, otlptracehttp.WithEndpointURL(u.String()))
		}
		return otlptracehttp.New(ctx, opts...)
	case ProtocolGRPC:
		var opts []otlptracegrpc.Option
		if u != nil {
			opts = append(opts, otlptracegrpc.WithEndpointURL(u.String()))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	return nil, fmt.Errorf("tracing: OTEL_EXPORTER_OTLP_PROTOCOL %q is not supported: use %q or %q", proto, ProtocolHTTP, ProtocolGRPC)
}

// ParseEndpoint checks an --otlp-endpoint value: an http or https URL
// with a host.
func ParseEndpoint(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("tracing: --otlp-endpoint %q: %w", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("tracing: --otlp-endpoint %q: want an http:// or https:// URL with a host, such as http://otel-collector:4318", s)
	}
	return u, nil
}

// Tracer is the tracer Signoff's spans come from; nil when p is nil.
func (p *Provider) Tracer() trace.Tracer {
	if p == nil {
		return nil
	}
	return p.tp.Tracer(ScopeName)
}

// TracerProvider is p's provider (for the SDK's WithTracerProvider); nil
// when p is nil.
func (p *Provider) TracerProvider() trace.TracerProvider {
	if p == nil {
		return nil
	}
	return p.tp
}

// Shutdown exports the spans still buffered and stops export. Call it once,
// at the end of the process, with a deadline.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	return p.tp.Shutdown(ctx)
}

// Flush is Shutdown at the end of a process: at most 5 s, a failure
// logged. Nothing when p is nil.
func (p *Provider) Flush() {
	if p == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		p.log.Warn("flush traces", "err", err)
	}
}
