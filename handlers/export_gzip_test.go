package handlers_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestRunExportsGzipOnce: a run's CSV and JSON exports come gzipped, once,
// to a client that accepts it, and decompress to exactly what a client
// that does not gets.
func TestRunExportsGzipOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		p, err := st.CreateProvider(ctx, store.ProviderInput{Name: "p", BaseURL: "http://127.0.0.1:9"})
		if err != nil {
			t.Fatal(err)
		}
		keys := make([]string, 300)
		var res []storetest.ItemResult
		for i := range keys {
			keys[i] = fmt.Sprintf("t%03d", i)
			if _, err := st.CreateTask(ctx, store.TaskInput{TaskKey: keys[i], Category: "c", Question: "q " + keys[i]}); err != nil {
				t.Fatal(err)
			}
			res = append(res, storetest.ItemResult{Model: "a", Task: keys[i], Overall: 0.5, TimeMs: int64(i)})
		}
		run := storetest.FixedRun(t, st, "r", p.ID, []string{"a", "b"}, keys, res)
		a := newApp(t, st, nil)
		// The export's time, to the second, may differ between two downloads.
		exportedAt := regexp.MustCompile(`"exported_at":"[^"]*"`)
		for _, path := range []string{
			fmt.Sprintf("/api/runs/%d/export?format=csv", run.ID),
			fmt.Sprintf("/api/runs/%d/export?format=json", run.ID),
			fmt.Sprintf("/api/export?run_ids=%d&format=json", run.ID),
		} {
			plain, plainEnc := fetchEncoded(t, a, path, "")
			zipped, zipEnc := fetchEncoded(t, a, path, "gzip")
			if plainEnc != "" || zipEnc != "gzip" {
				t.Fatalf("%s: Content-Encoding %q without gzip asked, %q with", path, plainEnc, zipEnc)
			}
			zr, err := gzip.NewReader(bytes.NewReader(zipped))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			unzipped, err := io.ReadAll(zr)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if len(plain) < 1000 || !bytes.Equal(exportedAt.ReplaceAll(unzipped, nil), exportedAt.ReplaceAll(plain, nil)) {
				t.Errorf("%s: gunzipped %d bytes differ from the %d plain ones", path, len(unzipped), len(plain))
			}
		}
	})
}

// fetchEncoded GETs path with the Accept-Encoding given and returns the body
// as it came, undecoded, and its Content-Encoding.
func fetchEncoded(t *testing.T, a *app, path, acceptEncoding string) ([]byte, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, a.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", path, res.Status, err)
	}
	return body, res.Header.Get("Content-Encoding")
}
