// Command oraclestub stands in for every program on the system paths of
// the policy's differential oracle (oracle_test.go): it records the
// program bash executed and its arguments, one JSON line per run appended
// to /mnt/exec.log, and exits 0 without doing anything else.
package main

import (
	"encoding/json"
	"os"
)

func main() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		exe = os.Args[0]
	}
	line, _ := json.Marshal(struct {
		Exe  string   `json:"exe"`
		Argv []string `json:"argv"`
	}{exe, os.Args})
	f, err := os.OpenFile("/mnt/exec.log", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		os.Exit(0)
	}
	f.Write(append(line, '\n'))
	f.Close()
}
