package integration

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
	tclog "github.com/testcontainers/testcontainers-go/log"

	"github.com/signoff-dev/signoff/integration/internal/plane"
)

// suite is what TestMain found out about the machine, for requireImages.
var suite struct {
	ci        bool
	images    plane.Images
	dockerErr error // the Docker engine cannot be reached
	imagesErr error // the images could not be built or are missing
}

// TestMain prepares the containers of the suite once: it turns off
// testcontainers' reaper (its image cannot be pulled where no registry is
// reachable; every test removes what it started in t.Cleanup instead),
// checks that the Docker engine answers, and runs scripts/build-images.sh,
// which rebuilds only what changed. Tests call requireImages first.
func TestMain(m *testing.M) {
	flag.Parse()
	os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	if !truthy(os.Getenv("SIGNOFF_IT_DOCKER_LOG")) {
		tclog.SetDefault(tclog.NewNoopLogger())
	}
	suite.ci = truthy(os.Getenv("CI"))
	suite.images = plane.ImagesFromEnv()
	suite.dockerErr, suite.imagesErr = prepareImages()
	if suite.dockerErr != nil && !suite.ci {
		fmt.Fprintf(os.Stderr, "\n%s\n*** integration: Docker is not reachable: the end-to-end suite is SKIPPED.\n*** %v\n*** With CI=true this is a failure.\n%s\n\n",
			strings.Repeat("*", 78), suite.dockerErr, strings.Repeat("*", 78))
	}
	os.Exit(m.Run())
}

// requireImages returns the images of the suite. When the Docker engine
// cannot be reached it skips t with a loud message, or fails it when CI is
// set (a skipped end-to-end suite is not a passing one); when the images
// could not be built it fails t.
func requireImages(t testing.TB) plane.Images {
	t.Helper()
	if err := suite.dockerErr; err != nil {
		msg := fmt.Sprintf("Docker is not reachable (%v); the end-to-end suite needs a Docker engine "+
			"(DOCKER_HOST or /var/run/docker.sock)", err)
		if suite.ci {
			t.Fatal(msg)
		}
		t.Skip("*** SKIPPED: " + msg + ". With CI=true this fails. ***")
	}
	if err := suite.imagesErr; err != nil {
		t.Fatalf("the suite's images are not available: %v\nbuild them with `make images` (scripts/build-images.sh)", err)
	}
	return suite.images
}

// prepareImages checks the Docker engine, then builds the images and checks
// that every one is there.
func prepareImages() (dockerErr, imagesErr error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	// A plain Docker client first: testcontainers reads its configuration
	// once, and localDockerHost may still have to set part of it.
	docker, err := client.New(client.FromEnv)
	if err != nil {
		return err, nil
	}
	defer docker.Close()
	pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
	_, err = docker.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true})
	pcancel()
	if err != nil {
		return err, nil
	}
	localDockerHost(ctx, docker)

	if !truthy(os.Getenv("SIGNOFF_SKIP_IMAGE_BUILD")) {
		if err := buildImages(ctx); err != nil {
			return nil, err
		}
	}
	missing, err := plane.Missing(ctx, docker, suite.images)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing images: %s", strings.Join(missing, ", "))
	}
	return nil, nil
}

// localDockerHost points testcontainers at 127.0.0.1 for published ports
// when the Docker engine runs in this network namespace. testcontainers
// looks for them at the bridge's gateway instead when it believes it runs
// inside a container (there is a /.dockerenv), which is wrong in a VM or
// sandbox that carries that file and its own engine. The engine is local
// when the default bridge's gateway is one of this machine's addresses.
// TESTCONTAINERS_HOST_OVERRIDE, when set, is left alone.
func localDockerHost(ctx context.Context, docker client.APIClient) {
	if os.Getenv("TESTCONTAINERS_HOST_OVERRIDE") != "" {
		return
	}
	bridge, err := docker.NetworkInspect(ctx, "bridge", client.NetworkInspectOptions{})
	if err != nil {
		return
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return
	}
	for _, cfg := range bridge.Network.IPAM.Config {
		gw := cfg.Gateway
		if !gw.IsValid() && cfg.Subnet.IsValid() {
			gw = cfg.Subnet.Masked().Addr().Next() // Docker's default: the subnet's first address
		}
		for _, a := range addrs {
			if ipnet, ok := a.(*net.IPNet); ok && gw.IsValid() && ipnet.IP.Equal(net.IP(gw.AsSlice())) {
				os.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
				return
			}
		}
	}
}

// buildImages runs scripts/build-images.sh from the module root. It is
// incremental: an image whose binary did not change is not rebuilt.
func buildImages(ctx context.Context) error {
	root, err := filepath.Abs("..")
	if err != nil {
		return err
	}
	script := filepath.Join(root, "scripts", "build-images.sh")
	if _, err := os.Stat(script); err != nil {
		return fmt.Errorf("image build script: %w", err)
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", script, err, tail(string(out), 40))
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "integration: images ready in %s\n", time.Since(start).Round(100*time.Millisecond))
	}
	return nil
}

func tail(s string, lines int) string {
	parts := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(parts) > lines {
		parts = parts[len(parts)-lines:]
	}
	return strings.Join(parts, "\n")
}

func truthy(v string) bool {
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	return err == nil && b
}
