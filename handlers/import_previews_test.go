package handlers

import (
	"testing"
	"time"

	"tribunal/importer"
)

// Kept previews are bounded in number, in bytes and in age; the oldest go first.
func TestImportPreviewsBounds(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ps := newImportPreviews(func() time.Time { return now })
	put := func(size int) string {
		now = now.Add(time.Second)
		return ps.put(&importPreview{res: &importer.Result{}, size: size})
	}

	var tokens []string
	for range maxPreviews + 2 {
		tokens = append(tokens, put(1))
	}
	if ps.get(tokens[0]) != nil || ps.get(tokens[1]) != nil || ps.get(tokens[2]) == nil || len(ps.byKey) != maxPreviews {
		t.Fatalf("count bound: %d kept, the first two still there: %v %v", len(ps.byKey), ps.get(tokens[0]) != nil, ps.get(tokens[1]) != nil)
	}
	if tokens[2] == tokens[3] || len(tokens[2]) != 32 {
		t.Errorf("tokens %q %q", tokens[2], tokens[3])
	}

	big := put(maxPreviewBytes - 2)
	if ps.bytes > maxPreviewBytes || ps.get(big) == nil || ps.get(tokens[len(tokens)-1]) == nil {
		t.Fatalf("byte bound: %d bytes kept", ps.bytes)
	}
	small := put(3) // only dropping the big one makes room
	if ps.get(big) != nil || ps.bytes > maxPreviewBytes {
		t.Errorf("byte bound: the big preview is still kept (%d bytes)", ps.bytes)
	}

	before := ps.bytes
	ps.remove(small)
	if ps.get(small) != nil || ps.bytes != before-3 {
		t.Errorf("remove: still kept, or %d bytes (want %d)", ps.bytes, before-3)
	}

	young := put(1)
	now = now.Add(previewTTL - time.Second)
	if ps.get(young) == nil {
		t.Fatal("a preview expired early")
	}
	now = now.Add(2 * time.Second)
	if ps.get(young) != nil {
		t.Error("a preview outlived its TTL")
	}
	for _, k := range tokens {
		if ps.get(k) != nil {
			t.Errorf("%s still kept", k)
		}
	}
	if len(ps.byKey) != 0 || ps.bytes != 0 {
		t.Errorf("%d previews, %d bytes left", len(ps.byKey), ps.bytes)
	}
}
