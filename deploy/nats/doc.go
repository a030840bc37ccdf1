// Package nats holds the NATS server configuration of a Signoff deployment
// (the *.conf files next to this one: nkey users per role with subject
// permissions) and the tests that start a real nats-server with those exact
// files and prove what each role may and may not do. It has no code of its
// own; see README.md, and genkeys for making the keys.
package nats
