// Package buildinfo says which build a Signoff binary is: the module
// version and the version-control revision it was built from, as the Go
// toolchain recorded them (runtime/debug.ReadBuildInfo). Every binary
// prints it for --version.
package buildinfo
