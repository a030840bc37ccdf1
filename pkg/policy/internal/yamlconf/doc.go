// Package yamlconf decodes the policy file's YAML node tree strictly: a
// [Decoder] checks kinds, rejects unknown and duplicate keys and aliases,
// and reports the first mistake as an [Error] with its file, line and
// column. Package policy decodes the policy with it and package shell the
// programs: section, so both report mistakes the same way.
package yamlconf
