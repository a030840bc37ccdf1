package httpapitest_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/signoff-dev/signoff/internal/httpapi/httpapitest"
)

func TestRecorderRecordsAndLeavesTheBodyToTheHandler(t *testing.T) {
	var rec httpapitest.Recorder
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.Record(strings.TrimPrefix(r.URL.Path, "/"), r)
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, string(b))
		mu.Unlock()
	}))
	defer srv.Close()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := []string{"a", "b"}[i%2]
			resp, err := http.Post(srv.URL+"/"+m, "text/plain", strings.NewReader("body-"+m))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}()
	}
	wg.Wait()
	if rec.Calls("a") != 10 || rec.Calls("b") != 10 || rec.Calls("c") != 0 || rec.Total() != 20 {
		t.Fatalf("calls a=%d b=%d c=%d total=%d; want 10, 10, 0, 20", rec.Calls("a"), rec.Calls("b"), rec.Calls("c"), rec.Total())
	}
	for _, r := range rec.Requests() {
		if string(r.Body) != "body-"+r.Call || r.Method != http.MethodPost || r.Path != "/"+r.Call || r.Header.Get("Content-Type") != "text/plain" {
			t.Errorf("recorded %+v", r)
		}
	}
	for _, s := range seen {
		if s != "body-a" && s != "body-b" {
			t.Errorf("handler read %q after the recorder", s)
		}
	}
}
