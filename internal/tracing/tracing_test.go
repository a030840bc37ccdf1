package tracing_test

import (
	"context"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/internal/tracing"
)

type env map[string]string

func (e env) get(k string) string { return e[k] }

func TestSetup(t *testing.T) {
	tests := []struct {
		name     string
		endpoint string
		env      env
		wantOn   bool
		wantProt string
		wantErr  string
	}{
		{name: "no endpoint and no variables: off", env: env{}},
		{name: "the flag turns it on over HTTP", endpoint: "http://127.0.0.1:4318", env: env{}, wantOn: true, wantProt: tracing.ProtocolHTTP},
		{name: "the standard endpoint variable turns it on", env: env{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, wantOn: true, wantProt: tracing.ProtocolHTTP},
		{name: "the traces endpoint variable turns it on", env: env{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, wantOn: true, wantProt: tracing.ProtocolHTTP},
		{name: "the protocol variable picks gRPC", endpoint: "http://127.0.0.1:4317", env: env{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, wantOn: true, wantProt: tracing.ProtocolGRPC},
		{name: "the traces protocol beats the general one", endpoint: "http://127.0.0.1:4317", env: env{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, wantOn: true, wantProt: tracing.ProtocolGRPC},
		{name: "OTEL_SDK_DISABLED keeps it off", endpoint: "http://127.0.0.1:4318", env: env{"OTEL_SDK_DISABLED": "true"}},
		{name: "OTEL_TRACES_EXPORTER=none keeps it off", endpoint: "http://127.0.0.1:4318", env: env{"OTEL_TRACES_EXPORTER": "none"}},
		{name: "an endpoint that is not a URL is refused", endpoint: "127.0.0.1:4318", env: env{}, wantErr: "--otlp-endpoint"},
		{name: "an endpoint of another scheme is refused", endpoint: "ftp://collector:4318", env: env{}, wantErr: "http:// or https://"},
		{name: "an unsupported protocol is refused", endpoint: "http://127.0.0.1:4318", env: env{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, wantErr: "http/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tracing.Setup(context.Background(), tracing.Config{Endpoint: tt.endpoint, Service: "test", Getenv: tt.env.get})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = p.Shutdown(context.Background()) }()
			if on := p != nil; on != tt.wantOn {
				t.Fatalf("on = %v, want %v", on, tt.wantOn)
			}
			if p == nil {
				if p.Tracer() != nil || p.TracerProvider() != nil {
					t.Fatal("tracing off, yet a tracer")
				}
				return
			}
			if p.Protocol != tt.wantProt || p.Tracer() == nil {
				t.Fatalf("protocol %q (tracer %v), want %q", p.Protocol, p.Tracer(), tt.wantProt)
			}
		})
	}
}
