package main

import (
	"os"

	"github.com/signoff-dev/signoff/internal/healthcheck"
)

// defaultURL is nats-server's health endpoint in the signoff/nats image
// (--http_port 8222; deploy/nats/server.conf): healthy once the server
// accepts clients and JetStream is enabled.
const defaultURL = "http://127.0.0.1:8222/healthz?js-enabled-only=true"

func main() {
	os.Exit(healthcheck.Main("signoff-healthcheck", os.Args[1:], defaultURL, os.Stdout, os.Stderr))
}
