// Package cmdflag is the flag handling Signoff's commands share (broker,
// signoff, approver-bot, the healthcheck): a usage that prints the
// command's text and then its flags, the exit status a parse ends in, and
// the refusal of positional arguments.
package cmdflag
