// Package pagertest provides httptest fakes of PagerDuty's Events API v2
// and Opsgenie's Alert API, built from the vendors' documented request and
// response formats. Each fake validates what it receives (method, path,
// auth, JSON shape with unknown fields refused, required fields, field
// lengths), keeps incidents the way the vendor deduplicates them, exposes
// every accepted request on a channel, and can be told to answer the next
// requests with 429 (with Retry-After), 5xx, a delay, or any status.
package pagertest
