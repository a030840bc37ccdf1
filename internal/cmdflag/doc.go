// Package cmdflag is the flag handling Signoff's commands share (broker,
// signoff, approver-bot, the healthcheck): a usage that prints the
// command's text and then its flags, the exit status a parse ends in, the
// refusal of positional arguments, and the precedence of a flag's sources
// ([Fill]: the command line beats the SIGNOFF_* environment, which beats
// the YAML config file).
package cmdflag
