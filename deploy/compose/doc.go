// Package compose holds the Docker Compose demo plane (docker-compose.yml:
// a 3-node NATS cluster, Redis, three brokers and the approver bot's web
// page; policy.yaml and approver-bot.yaml next to it) and a test that
// resolves the file with the compose tools on the machine and checks what
// the brokers are given. It has no code of its own; docs/OPERATIONS.md
// explains the plane, integration/compose_test.go runs it.
package compose
