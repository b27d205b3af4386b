package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// notifyChannel carries run ids between processes on PostgreSQL.
const notifyChannel = "tribunal_runs"

// NotifyRuns tells other processes that these runs changed (PostgreSQL
// NOTIFY); on SQLite, where there is one process, it does nothing.
func (s *Store) NotifyRuns(ctx context.Context, runIDs []int64) error {
	if s.dialect != Postgres || len(runIDs) == 0 {
		return nil
	}
	for _, id := range runIDs {
		if err := s.conn(ctx).Exec("SELECT pg_notify(?, ?)", notifyChannel, strconv.FormatInt(id, 10)).Error; err != nil {
			return fmt.Errorf("store: notify: %w", err)
		}
	}
	return nil
}

// ListenRuns calls fn with the id of each run another process changed, until
// ctx ends. It reconnects after errors. On SQLite it returns at once.
func (s *Store) ListenRuns(ctx context.Context, fn func(runID int64), onErr func(error)) {
	if s.dialect != Postgres {
		return
	}
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, fn)
		if ctx.Err() != nil {
			return
		}
		onErr(err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (s *Store) listenOnce(ctx context.Context, fn func(int64)) error {
	conn, err := pgx.Connect(ctx, s.dsn)
	if err != nil {
		return fmt.Errorf("store: listen connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return fmt.Errorf("store: listen: %w", err)
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("store: wait for notification: %w", err)
		}
		if id, err := strconv.ParseInt(n.Payload, 10, 64); err == nil {
			fn(id)
		}
	}
}
