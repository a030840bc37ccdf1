// Package helm holds no code: it is a Go module of its own (go.mod here)
// whose test renders the Helm chart in signoff/ with Helm's own library
// (helm.sh/helm/v3) and decodes every object strictly into its Kubernetes
// type. Helm pulls in much of k8s.io and its dependencies: as a nested
// module, it stays out of the main module's build, `go vet ./...` and
// go.sum; `make test` and `make lint` run it as well (the Makefile's
// helm-test and helm-vet steps).
package helm
