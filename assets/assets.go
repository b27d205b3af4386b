// Package assets embeds the vendored front-end files (htmx, its SSE
// extension, Pico CSS) and the app's own CSS; no build step.
package assets

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
)

//go:embed *.js *.css
var FS embed.FS

var versions = func() map[string]string {
	out := map[string]string{}
	entries, _ := fs.ReadDir(FS, ".")
	for _, e := range entries {
		b, err := FS.ReadFile(e.Name())
		if err != nil {
			continue
		}
		sum := sha256.Sum256(b)
		out[e.Name()] = hex.EncodeToString(sum[:6])
	}
	return out
}()

// URL is the cache-busting address of an asset: it changes when the file does,
// so browsers may cache it for ever.
func URL(name string) string {
	return "/assets/" + name + "?v=" + versions[name]
}
