package store

import (
	"reflect"
	"sync"
	"testing"

	"gorm.io/gorm/schema"
)

// TestItemColumns: the hand-written scan of items reads every column of the
// Item model, each into its own field, so a column added to Item cannot be
// left out of the claim's or the completion's rows unnoticed.
func TestItemColumns(t *testing.T) {
	sch, err := schema.Parse(&Item{}, &sync.Map{}, schema.NamingStrategy{})
	if err != nil {
		t.Fatal(err)
	}
	var it Item
	fields := itemFields(&it)
	if len(itemColumns) != len(sch.DBNames) || len(fields) != len(sch.DBNames) {
		t.Fatalf("%d columns and %d fields scanned, Item has %d columns: %v", len(itemColumns), len(fields), len(sch.DBNames), sch.DBNames)
	}
	for i, f := range sch.Fields {
		if itemColumns[i].name != f.DBName {
			t.Errorf("column %d: scanned %q, Item has %q", i, itemColumns[i].name, f.DBName)
		}
		want := reflect.ValueOf(&it).Elem().FieldByIndex(f.StructField.Index).Addr().Pointer()
		if got := reflect.ValueOf(fields[i]).Pointer(); got != want {
			t.Errorf("column %q is not scanned into Item.%s", f.DBName, f.Name)
		}
	}
}
