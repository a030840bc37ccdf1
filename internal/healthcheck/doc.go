// Package healthcheck is the client side of the health endpoints, for
// container healthchecks in images that have no shell, curl or wget (they
// are FROM scratch): `broker health`, `approver-bot health` and the
// signoff-healthcheck binary of the NATS image call [Main], which GETs one
// URL and exits 0 on 200.
package healthcheck
