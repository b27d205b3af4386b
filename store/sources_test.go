package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

func TestSourcesCRUD(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		src, err := st.CreateSource(ctx, store.SourceInput{Name: " prod ", BaseURL: "https://lf.example.com/", PublicKey: "pk-lf-1",
			SecretKey: "sk-lf-abcdef123456", Project: "agents"})
		if err != nil {
			t.Fatal(err)
		}
		if src.Name != "prod" || src.Type != store.SourceLangfuse || src.BaseURL != "https://lf.example.com" ||
			src.SecretKey != "••••••3456" || src.Project != "agents" {
			t.Errorf("created = %+v", src)
		}
		clear, err := st.SourceWithSecret(ctx, src.ID)
		if err != nil || clear.SecretKey != "sk-lf-abcdef123456" {
			t.Fatalf("SourceWithSecret = %+v, %v", clear, err)
		}
		if _, err := st.CreateSource(ctx, store.SourceInput{Name: "prod", BaseURL: "https://x.example.com", PublicKey: "pk", SecretKey: "sk"}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("duplicate name: %v", err)
		}
		if _, err := st.CreateSource(ctx, store.SourceInput{Name: "a second", BaseURL: "https://b.example.com", PublicKey: "pk", SecretKey: "sk-2"}); err != nil {
			t.Fatal(err)
		}
		list, err := st.Sources(ctx)
		if err != nil || len(list) != 2 || list[0].Name != "a second" || list[1].SecretKey != "••••••3456" {
			t.Fatalf("Sources = %+v, %v", list, err)
		}

		// The mask sent back keeps the key, on the same origin (another path is fine).
		up, err := st.UpdateSource(ctx, src.ID, store.SourceInput{Name: "prod", BaseURL: "https://lf.example.com/langfuse", PublicKey: "pk-lf-2",
			SecretKey: src.SecretKey})
		if err != nil || up.PublicKey != "pk-lf-2" || up.Project != "" {
			t.Fatalf("update = %+v, %v", up, err)
		}
		if clear, _ := st.SourceWithSecret(ctx, src.ID); clear.SecretKey != "sk-lf-abcdef123456" {
			t.Errorf("mask sent back changed the key to %q", clear.SecretKey)
		}
		// Another origin with the mask: refused, the key stays where it was entered.
		_, err = st.UpdateSource(ctx, src.ID, store.SourceInput{Name: "prod", BaseURL: "https://evil.example.com", PublicKey: "pk-lf-2", SecretKey: src.SecretKey})
		wantInvalid(t, "new origin, masked key", err, "secret_key", "base URL changed")
		_, err = st.UpdateSource(ctx, src.ID, store.SourceInput{Name: "prod", BaseURL: "https://evil.example.com", PublicKey: "pk-lf-2"})
		wantInvalid(t, "new origin, empty key", err, "secret_key", "base URL changed")
		if got, _ := st.Source(ctx, src.ID); got.BaseURL != "https://lf.example.com/langfuse" {
			t.Errorf("a refused update changed the base URL to %s", got.BaseURL)
		}
		// With the key entered again it moves.
		if _, err := st.UpdateSource(ctx, src.ID, store.SourceInput{Name: "prod", BaseURL: "https://new.example.com", PublicKey: "pk-lf-2", SecretKey: "sk-new-9999"}); err != nil {
			t.Fatal(err)
		}
		if clear, _ := st.SourceWithSecret(ctx, src.ID); clear.SecretKey != "sk-new-9999" || clear.BaseURL != "https://new.example.com" {
			t.Errorf("after a new key: %+v", clear)
		}

		if err := st.DeleteSource(ctx, src.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Source(ctx, src.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deleted source: %v", err)
		}
		if err := st.DeleteSource(ctx, src.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deleting twice: %v", err)
		}
		if _, err := st.UpdateSource(ctx, src.ID, store.SourceInput{Name: "x", BaseURL: "https://a.example.com", PublicKey: "pk", SecretKey: "sk"}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("updating a deleted source: %v", err)
		}
	})
}

func TestSourceValidation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		ok := store.SourceInput{Name: "s", BaseURL: "https://lf.example.com", PublicKey: "pk", SecretKey: "sk"}
		for _, tt := range []struct {
			edit         func(*store.SourceInput)
			field, words string
		}{
			{func(in *store.SourceInput) { in.Name = " " }, "name", "required"},
			{func(in *store.SourceInput) { in.Type = "PHOENIX" }, "type", "LANGFUSE"},
			{func(in *store.SourceInput) { in.BaseURL = "" }, "base_url", "required"},
			{func(in *store.SourceInput) { in.BaseURL = "ftp://lf.example.com" }, "base_url", "http"},
			{func(in *store.SourceInput) { in.BaseURL = "https://pk:sk@lf.example.com" }, "base_url", "credentials"},
			{func(in *store.SourceInput) { in.BaseURL = "http://169.254.169.254" }, "base_url", ""},
			{func(in *store.SourceInput) { in.PublicKey = "" }, "public_key", "required"},
			{func(in *store.SourceInput) { in.SecretKey = "" }, "secret_key", "required"},
			{func(in *store.SourceInput) { in.SecretKey = "••••••abcd" }, "secret_key", "required"},
		} {
			in := ok
			tt.edit(&in)
			_, err := st.CreateSource(ctx, in)
			wantInvalid(t, tt.field, err, tt.field, tt.words)
		}
		if _, err := st.CreateSource(ctx, ok); err != nil {
			t.Errorf("the valid input: %v", err)
		}
	})
}

// TestSourceSecretKeySealed: the secret key is encrypted at rest.
func TestSourceSecretKeySealed(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{DataDir: dir, Box: storetest.Box(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.CreateSource(ctx, store.SourceInput{Name: "s", BaseURL: "https://lf.example.com", PublicKey: "pk-lf-public",
		SecretKey: "sk-lf-s3cr3t"}); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "tribunal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var public, raw string
	if err := db.QueryRow("SELECT public_key, secret_key FROM sources").Scan(&public, &raw); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(raw, "s3cr3t") || !strings.HasPrefix(raw, "v1:") || public != "pk-lf-public" {
		t.Errorf("at rest: public_key %q, secret_key %q", public, raw)
	}
}

// TestDeleteSourceWithActiveImport: a source whose imported run is still
// active is kept (409 naming the run), another source is not held by it,
// and once the run has ended the source goes while the run keeps its origin.
func TestDeleteSourceWithActiveImport(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		var srcs [2]*store.Source
		for i, name := range []string{"prod", "staging"} {
			s, err := st.CreateSource(ctx, store.SourceInput{Name: name, BaseURL: "https://lf.example.com", PublicKey: "pk-lf-1", SecretKey: "sk-lf-abcdef123456"})
			if err != nil {
				t.Fatal(err)
			}
			srcs[i] = s
		}
		origin := &store.RunSource{SourceID: srcs[0].ID, Dataset: "qa", Run: "v1", SourceName: "prod"}
		run, _, err := st.CreateImportedRun(ctx, store.RunInput{Name: "qa / v1", Metrics: []string{"check_contains"}},
			store.ImportInput{Collection: "qa", Tasks: []store.TaskInput{{TaskKey: "item-1", Category: "qa", Question: "2+2?", Reference: "4",
				Checks: []store.Check{{Type: "contains"}}}}},
			store.ImportedRun{Targets: []store.ImportedTarget{{Provider: "Langfuse", Model: "qa / v1", Source: origin}},
				Answers: []store.ImportedAnswer{{TaskKey: "item-1", Response: new("4")}}})
		if err != nil {
			t.Fatal(err)
		}
		err = st.DeleteSource(ctx, srcs[0].ID)
		if !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), fmt.Sprintf("run %d", run.ID)) {
			t.Fatalf("deleting the source of a pending import: %v", err)
		}
		if err := st.DeleteSource(ctx, srcs[1].ID); err != nil {
			t.Fatalf("another source: %v", err)
		}
		if _, err := st.SetRunStatus(ctx, run.ID, store.RunCancelled, store.RunPending); err != nil {
			t.Fatal(err)
		}
		if err := st.DeleteSource(ctx, srcs[0].ID); err != nil {
			t.Fatalf("the source of an ended import: %v", err)
		}
		kept, err := st.Run(ctx, run.ID)
		if err != nil || kept.Targets[0].Source == nil || *kept.Targets[0].Source != *origin {
			t.Errorf("the ended run's origin: %+v, %v", kept.Targets[0].Source, err)
		}
	})
}
