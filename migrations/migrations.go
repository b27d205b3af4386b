// Package migrations holds the SQL schema, one folder per database dialect
// with the same version numbers, embedded for golang-migrate.
package migrations

import "embed"

// FS holds the sqlite/ and postgres/ migration folders.
//
//go:embed sqlite/*.sql postgres/*.sql
var FS embed.FS
