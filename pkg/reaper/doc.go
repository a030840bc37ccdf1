// Package reaper provides the expiry loop that runs inside every broker
// replica: it claims pending requests whose expiry has passed and hands
// each one to a callback that publishes the timeout decision.
//
// The reaper never decides by its own clock. The store's ClaimExpired
// compares expiries with the store's clock (Redis TIME) and returns each
// expired request to exactly one caller across every replica, so running
// one reaper per replica reports each timeout exactly once. A request
// claimed by a replica that dies before its callback ran stays expired in
// the store; a status request still reports it.
//
// Timeliness: a reaper sweeps at least every Config.Interval (default
// 500 ms), so every request is reported within expiry + Interval + one
// sweep. When the store also implements [NextExpirer] (memstore does), the
// reaper sleeps only until the store says the next request is due, so a
// request that was pending when the reaper went to sleep is reported within
// milliseconds of its expiry; the Interval still bounds the delay for
// requests created while it sleeps.
package reaper
