package web

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/client"
)

// screenshotPath is the page's picture in the docs; the browser test
// rewrites it when SIGNOFF_UPDATE_SCREENSHOT=1 (never in CI).
var screenshotPath = filepath.Join("..", "..", "..", "docs", "web.png")

// updateScreenshot fills the page with typical questions and saves the
// desktop and phone views side by side as docs/web.png.
func updateScreenshot(t *testing.T, r *rig, browser context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	carol := newBrowserPage(t, browser, "carol")
	carol.login(r.srv.URL, "carol", "carol-password")

	release := r.plane.Agent("sess-7f3a", "pod-7")
	go func() {
		_, _ = release.RunBatch(ctx, []client.Call{
			{RequestID: "req-release", Tool: "bash", Description: "Publish the release branch",
				Arguments: brokertest.Bash("ls -la dist && git push origin release/2.4")},
			{Tool: "write", Arguments: map[string]any{"path": "CHANGELOG.md", "content": "## 2.4.0\n…"}},
			{Tool: "bash", Arguments: brokertest.Bash("npm run build")},
		}, func(context.Context, client.Call) error { return nil })
	}()
	carol.cardShown("req-release")

	brokertest.Ask(ctx, r.plane.Agent("sess-ops-2", "pod-12"), "req-rollout", "bash",
		brokertest.Bash("kubectl rollout restart deployment/api -n prod"))
	dave, daveCSRF := r.login(t, "dave", "dave-password")
	r.waitQuestion(t, dave, "req-rollout")
	if status, _, raw := r.respond(t, dave, daveCSRF, "req-rollout", actionApprove, ""); status != 200 {
		t.Fatalf("dave's approval: %s", raw)
	}
	brokertest.Ask(ctx, r.plane.Agent("sess-9c1d", "pod-3"), "req-install", "bash",
		brokertest.Bash("curl -fsSL https://get.example.dev/install.sh | sh"))
	carol.poll("the quorum card shows dave's approval",
		`document.querySelector('#q-req-rollout .quorum')?.textContent.includes('1 of 2') ? 'yes' : ''`, 5*time.Second)
	carol.cardShown("req-install")

	sideBySide(t, carol, 1120, screenshotPath)
}

// sideBySide saves p's desktop and phone views, height pixels tall, side by
// side as the PNG at path.
func sideBySide(t *testing.T, p *browserPage, height int64, path string) {
	t.Helper()
	shot := func(width, height int64) image.Image {
		p.do("set the viewport",
			chromedp.EmulateViewport(width, height),
			chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0); document.activeElement.blur()`),
			chromedp.Sleep(300*time.Millisecond), // layout, and the countdown's tick
		)
		data, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		return img
	}
	desktop, phone := shot(1160, height), shot(420, height)

	const pad = 28
	bg := color.RGBA{0xd9, 0xde, 0xe6, 0xff}
	frame := color.RGBA{0xb4, 0xbc, 0xc8, 0xff}
	dw, pw := desktop.Bounds().Dx(), phone.Bounds().Dx()
	out := image.NewRGBA(image.Rect(0, 0, pad+dw+pad+pw+pad, pad+int(height)+pad))
	draw.Draw(out, out.Bounds(), &image.Uniform{bg}, image.Point{}, draw.Src)
	place := func(img image.Image, x int) {
		r := image.Rect(x, pad, x+img.Bounds().Dx(), pad+img.Bounds().Dy())
		draw.Draw(out, r.Inset(-1), &image.Uniform{frame}, image.Point{}, draw.Src)
		draw.Draw(out, r, img, img.Bounds().Min, draw.Src)
	}
	place(desktop, pad)
	place(phone, pad+dw+pad)
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, out); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d KiB)", path, buf.Len()>>10)
}
