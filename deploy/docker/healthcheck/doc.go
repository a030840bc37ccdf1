// Command signoff-healthcheck is the healthcheck of the signoff/nats image
// (FROM scratch: no shell, no curl): it GETs nats-server's monitoring
// endpoint, /healthz?js-enabled-only=true on port 8222 by default, and
// exits 0 when it answers 200 (`--url` for another). See
// internal/healthcheck; scripts/build-images.sh copies it into the image.
package main
