package plane

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// Images names the container images of a plane. The defaults are the local
// tags that scripts/build-images.sh builds; each can be overridden from the
// environment, so the suite also runs on the official nats and redis images
// where a registry is reachable.
type Images struct {
	Broker      string // SIGNOFF_IMAGE_BROKER, default signoff/broker:dev
	ApproverBot string // SIGNOFF_IMAGE_APPROVER_BOT, default signoff/approver-bot:dev
	NATS        string // SIGNOFF_IMAGE_NATS, default signoff/nats:dev
	Redis       string // SIGNOFF_IMAGE_REDIS, default signoff/redis:dev
	Agent       string // SIGNOFF_IMAGE_AGENT, default signoff/agent:dev
}

// ImagesFromEnv returns the default image names with the environment's
// overrides applied.
func ImagesFromEnv() Images {
	get := func(env, def string) string {
		if v := strings.TrimSpace(os.Getenv(env)); v != "" {
			return v
		}
		return def
	}
	return Images{
		Broker:      get("SIGNOFF_IMAGE_BROKER", "signoff/broker:dev"),
		ApproverBot: get("SIGNOFF_IMAGE_APPROVER_BOT", "signoff/approver-bot:dev"),
		NATS:        get("SIGNOFF_IMAGE_NATS", "signoff/nats:dev"),
		Redis:       get("SIGNOFF_IMAGE_REDIS", "signoff/redis:dev"),
		Agent:       get("SIGNOFF_IMAGE_AGENT", "signoff/agent:dev"),
	}
}

// All returns every image name, in a fixed order.
func (im Images) All() []string {
	return []string{im.Broker, im.ApproverBot, im.NATS, im.Redis, im.Agent}
}

// Missing returns the images of im that the Docker engine does not have.
// Nothing is pulled: the suite runs on locally built images.
func Missing(ctx context.Context, docker client.APIClient, im Images) ([]string, error) {
	var missing []string
	for _, name := range im.All() {
		if _, err := docker.ImageInspect(ctx, name); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if !errdefs.IsNotFound(err) {
				return nil, fmt.Errorf("inspect image %s: %w", name, err)
			}
			missing = append(missing, name)
		}
	}
	return missing, nil
}
