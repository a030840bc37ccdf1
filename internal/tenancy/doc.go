// Package tenancy provides the broker's tenants and identities (DESIGN
// §10, docs/OPERATIONS.md "Tenants and identity"): the tenants file that
// maps a NATS account to a tenant and a NATS user to an agent identity, a
// bot or an admin, its validation and reload, the parse of the
// Nats-Request-Info header the server stamps on every imported request,
// and the identity checks of a request (agent id, agent type, session).
//
// It knows NATS only as the header's text: internal/broker resolves each
// message to a [Tenant] and an [Identity] here and hands the engine a
// request that is already checked.
package tenancy
