package plane

import (
	"context"
	"errors"
	"os"
	"strconv"
	"syscall"

	"github.com/moby/moby/client"
)

// Prune removes the containers and networks that an earlier run of the
// suite on this host left behind: those labelled with a test process that
// no longer exists (a run killed by its -timeout never gets to its
// Cleanup, and without the reaper nothing else removes them). Planes of
// test processes still running are left alone.
func Prune(ctx context.Context, docker client.APIClient) error {
	host, _ := os.Hostname()
	orphan := func(labels map[string]string) bool {
		if labels[labelHost] != host {
			return false
		}
		pid, err := strconv.Atoi(labels[labelPID])
		if err != nil || pid <= 0 {
			return false
		}
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	}
	var errs []error
	cs, err := docker.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: client.Filters{}.Add("label", labelPlane)})
	if err != nil {
		return err
	}
	for _, c := range cs.Items {
		if orphan(c.Labels) {
			if _, err := docker.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
				errs = append(errs, err)
			}
		}
	}
	nws, err := docker.NetworkList(ctx, client.NetworkListOptions{Filters: client.Filters{}.Add("label", labelPlane)})
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, nw := range nws.Items {
		if orphan(nw.Labels) {
			if _, err := docker.NetworkRemove(ctx, nw.ID, client.NetworkRemoveOptions{}); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
