package shell

import (
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSettingsWritersDeclareWhatTheProgramWrites runs real programs (helm,
// as scripts/test-deps.sh builds it) in an empty home and project and
// checks that every file they create or change is among the writes the
// analysis records for the command — the settings a sub-command persists
// for every later command (helm repo add URL makes the next helm install
// fetch charts from URL) are writes the policy judges, in the home
// outside the workspace too.
func TestSettingsWritersDeclareWhatTheProgramWrites(t *testing.T) {
	helm := cobraBin(t, "helm")
	index := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("apiVersion: v1\nentries: {}\n"))
	}))
	defer index.Close()
	home, proj := t.TempDir(), t.TempDir()
	for _, args := range [][]string{
		{"repo", "add", "charts", index.URL},
		{"repo", "update"},
		{"repo", "remove", "charts"},
	} {
		before := snapshot(t, home, proj)
		cmd := exec.Command(helm, args...)
		cmd.Dir, cmd.Env = proj, []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		changed := changedFiles(before, snapshot(t, home, proj))
		if len(changed) == 0 {
			t.Fatalf("helm %s changed no file", strings.Join(args, " "))
		}
		a := Analyze("helm " + strings.Join(args, " "))
		var targets []string
		for _, c := range a.Commands {
			if c.Redirect && !c.Read {
				targets = append(targets, strings.Replace(c.Target, "~", home, 1))
			}
		}
		for _, f := range changed {
			covered := false
			for _, tg := range targets {
				covered = covered || f == tg || strings.HasPrefix(f, tg+"/")
			}
			if !covered {
				t.Errorf("helm %s wrote %s, which is not among its writes %q", strings.Join(args, " "), f, targets)
			}
		}
	}
}

// snapshot maps every file under dirs to its modification time and size.
func snapshot(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			info, err := e.Info()
			if err != nil {
				return err
			}
			out[p] = fmt.Sprint(info.ModTime().Format(time.RFC3339Nano), " ", info.Size())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// changedFiles lists the files of after that are new or differ from
// before, and those of before that are gone.
func changedFiles(before, after map[string]string) []string {
	var out []string
	for p, s := range after {
		if before[p] != s {
			out = append(out, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, p)
		}
	}
	return out
}
