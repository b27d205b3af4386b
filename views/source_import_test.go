package views

import (
	"strings"
	"testing"

	"tribunal/store"
)

// TestImportedFrom: the origin of an imported run links its source while it
// exists, else names the source as the import kept it, else says it is gone.
func TestImportedFrom(t *testing.T) {
	origin := store.RunSource{SourceID: 7, Dataset: "qa <v2>", Run: "nightly", SourceName: "old name"}
	unnamed := origin
	unnamed.SourceName = ""
	for _, tc := range []struct {
		name    string
		origin  store.RunSource
		sources map[int64]string
		want    string
	}{
		{"live", origin, map[int64]string{7: "prod"}, `Imported from <a href="/sources#source-7" data-testid="imported-source">prod</a>`},
		{"deleted", origin, nil, `Imported from <strong>old name</strong> <small class="muted">(deleted since)</small>`},
		{"deleted, no name kept", unnamed, map[int64]string{8: "other"}, "Imported from a deleted source"},
	} {
		var b strings.Builder
		if err := importedFrom(tc.origin, tc.sources).Render(t.Context(), &b); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(strings.Fields(b.String()), " ")
		if !strings.Contains(got, tc.want) || !strings.Contains(got, "dataset <strong>qa &lt;v2&gt;</strong> · run <strong>nightly</strong>") {
			t.Errorf("%s: %s", tc.name, got)
		}
	}
}
