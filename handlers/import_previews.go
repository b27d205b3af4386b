package handlers

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"tribunal/importer"
	"tribunal/store"
)

// Bounds of the kept previews: a few recent files, a few minutes' worth, in
// a fixed amount of memory (a file is at most importer.MaxFileSize).
const (
	maxPreviews     = 8
	maxPreviewBytes = 4 * importer.MaxFileSize
	previewTTL      = 30 * time.Minute
)

// importPreview is a previewed file, parsed, with what importing it would do.
type importPreview struct {
	name       string
	collection string
	tags       []string
	res        *importer.Result
	// dry is the store's dry run at preview time; nil when no row was good.
	dry  *store.ImportResult
	size int
	at   time.Time
}

// importPreviews keeps previews by a random token, so the preview pages
// through a big file and Import saves what was shown, without the browser
// sending the file again (a hidden copy would travel on every page and on
// Import). They live in this process's memory: Tribunal serves its pages
// from one process (workers serve none); a preview that expired, was pushed
// out by newer ones or lived in a restarted process asks for the file again.
type importPreviews struct {
	mu    sync.Mutex
	now   func() time.Time
	byKey map[string]*importPreview
	bytes int
}

func newImportPreviews(now func() time.Time) *importPreviews {
	return &importPreviews{now: now, byKey: map[string]*importPreview{}}
}

// put keeps p and returns its token, dropping expired previews and then the
// oldest ones until p fits.
func (ps *importPreviews) put(p *importPreview) string {
	b := make([]byte, 16)
	rand.Read(b) // never fails (crypto/rand)
	token := hex.EncodeToString(b)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p.at = ps.now()
	for k, old := range ps.byKey {
		if p.at.Sub(old.at) > previewTTL {
			ps.drop(k)
		}
	}
	for len(ps.byKey) > 0 && (len(ps.byKey) >= maxPreviews || ps.bytes+p.size > maxPreviewBytes) {
		oldest := ""
		for k, old := range ps.byKey {
			if oldest == "" || old.at.Before(ps.byKey[oldest].at) {
				oldest = k
			}
		}
		ps.drop(oldest)
	}
	ps.byKey[token] = p
	ps.bytes += p.size
	return token
}

// get returns the preview of token, or nil when it is not kept (any more).
func (ps *importPreviews) get(token string) *importPreview {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p := ps.byKey[token]
	if p != nil && ps.now().Sub(p.at) > previewTTL {
		ps.drop(token)
		return nil
	}
	return p
}

// remove forgets a preview once it was imported.
func (ps *importPreviews) remove(token string) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.byKey[token] != nil {
		ps.drop(token)
	}
}

func (ps *importPreviews) drop(token string) {
	ps.bytes -= ps.byKey[token].size
	delete(ps.byKey, token)
}
