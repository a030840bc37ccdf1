// Package metricdef defines the Prometheus collectors of Signoff's
// processes (broker, approver bot, escalator) from a name, a help text and
// label names, so that each metric is one line of its process's metrics
// instead of an options literal. The collectors are not registered.
package metricdef
