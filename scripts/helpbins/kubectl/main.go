// Command kubectl is kubectl as k8s.io/kubernetes/cmd/kubectl builds it,
// from the k8s.io/kubectl module: the program the program table's kubectl
// entry is checked against (pkg/policy/shell, TestCompleteTablesMatchHelp).
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
