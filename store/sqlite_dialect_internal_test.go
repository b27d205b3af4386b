package store

import (
	"errors"
	"path/filepath"
	"testing"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// The pure-Go dialect writes what SQLite understands and maps its
// constraint errors to GORM's.
func TestSQLiteDialect(t *testing.T) {
	db, err := gorm.Open(sqliteDialector{dsn: filepath.Join(t.TempDir(), "d.db")}, &gorm.Config{TranslateError: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(`CREATE TABLE "we""ird" (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE)`).Error; err != nil {
		t.Fatal(err)
	}
	type row struct {
		ID   int64
		Name string
	}
	for _, n := range []string{"a", "b", "c"} {
		r := row{Name: n}
		if err := db.Table(`we"ird`).Create(&r).Error; err != nil || r.ID == 0 {
			t.Fatalf("create %s: id %d, %v", n, r.ID, err)
		}
	}
	if err := db.Table(`we"ird`).Create(&row{Name: "a"}).Error; !errors.Is(err, gorm.ErrDuplicatedKey) {
		t.Errorf("duplicate: %v, want gorm.ErrDuplicatedKey", err)
	}

	// An offset without a limit, and a row lock, which SQLite has no syntax for.
	var names []string
	q := db.Table(`we"ird`).Clauses(clause.Locking{Strength: "UPDATE"}).Order("id").Offset(1)
	if err := q.Pluck("name", &names).Error; err != nil || len(names) != 2 || names[0] != "b" {
		t.Errorf("offset without limit = %v, %v", names, err)
	}
	stmt := db.Session(&gorm.Session{DryRun: true}).Table(`we"ird`).Offset(1).Find(&[]row{}).Statement
	if got, want := stmt.SQL.String(), `SELECT * FROM "we""ird" LIMIT -1 OFFSET 1`; got != want {
		t.Errorf("SQL = %s, want %s", got, want)
	}

}
