// Command otelcol is the OpenTelemetry Collector the trace tests send spans
// to: the Collector's own OTLP receiver (gRPC and HTTP), built from its Go
// module, whose pipeline ends in an exporter that writes every batch of
// spans it receives to stdout as one line of OTLP JSON, for the test to
// read. It lives in a module of its own so that the Collector's dependencies
// stay out of Signoff's build, vet and go.sum.
//
// Usage:
//
//	otelcol -grpc 127.0.0.1:4317 -http 127.0.0.1:4318
//
// It prints "ready" on stderr once both endpoints listen and runs until it
// receives SIGINT or SIGTERM.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "otelcol:", err)
		os.Exit(1)
	}
}

func run() error {
	grpcAddr := flag.String("grpc", "", "host:port of the OTLP/gRPC endpoint (empty: none)")
	httpAddr := flag.String("http", "", "host:port of the OTLP/HTTP endpoint (empty: none)")
	flag.Parse()
	if *grpcAddr == "" && *httpAddr == "" {
		return errors.New("give -grpc, -http or both")
	}

	factory := otlpreceiver.NewFactory()
	cfg := factory.CreateDefaultConfig().(*otlpreceiver.Config)
	if *grpcAddr == "" {
		cfg.Protocols.GRPC = configoptional.None[configgrpc.ServerConfig]()
	} else {
		g := configgrpc.NewDefaultServerConfig()
		g.NetAddr.Endpoint = *grpcAddr
		cfg.Protocols.GRPC = configoptional.Some(g)
	}
	if *httpAddr == "" {
		cfg.Protocols.HTTP = configoptional.None[otlpreceiver.HTTPConfig]()
	} else {
		h := otlpreceiver.HTTPConfig{ServerConfig: confighttp.NewDefaultServerConfig(), TracesURLPath: "/v1/traces"}
		h.ServerConfig.NetAddr.Endpoint = *httpAddr
		cfg.Protocols.HTTP = configoptional.Some(h)
	}

	out := &jsonLines{w: bufio.NewWriter(os.Stdout)}
	next, err := consumer.NewTraces(out.consume)
	if err != nil {
		return err
	}
	set := receiver.Settings{
		ID:                component.NewID(factory.Type()),
		TelemetrySettings: componenttest.NewNopTelemetrySettings(),
		BuildInfo:         component.NewDefaultBuildInfo(),
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rcv, err := factory.CreateTraces(ctx, set, cfg, next)
	if err != nil {
		return fmt.Errorf("create the OTLP receiver: %w", err)
	}
	if err := rcv.Start(ctx, componenttest.NewNopHost()); err != nil {
		return fmt.Errorf("start the OTLP receiver: %w", err)
	}
	fmt.Fprintln(os.Stderr, "ready")
	<-ctx.Done()
	return rcv.Shutdown(context.Background())
}

// jsonLines is the exporter: one line of OTLP JSON per batch received,
// flushed at once so that a reader sees spans as they arrive.
type jsonLines struct {
	mu sync.Mutex
	w  *bufio.Writer
	m  ptrace.JSONMarshaler
}

func (j *jsonLines) consume(_ context.Context, td ptrace.Traces) error {
	b, err := j.m.MarshalTraces(td)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.w.Write(append(b, '\n')); err != nil {
		return err
	}
	return j.w.Flush()
}
