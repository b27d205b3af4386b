package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// taskColumns are the columns insertTasks writes, in taskValues' order;
// created_at and updated_at follow them.
var taskColumns = []string{"task_key", "category", "subcategory", "question", "excellent", "good", "pass",
	"incorrect_answer_direction", "reference", "turns", "system_prompt", "usecase", "tags", "constraints",
	"examples", "judge_instructions", "comments", "input", "prompt_template", "checks", "metadata"}

// pgTaskChunk is how many tasks one PostgreSQL statement inserts: large
// enough that per-statement costs vanish, small enough to bound the memory
// of one statement's arrays.
const pgTaskChunk = 5000

// taskValues are t's column values in taskColumns' order, its JSON fields
// encoded as GORM's json serializer stores them.
func taskValues(t *Task) ([]string, error) {
	var jsonErr error
	encode := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil && jsonErr == nil {
			jsonErr = fmt.Errorf("store: encode task %q: %w", t.TaskKey, err)
		}
		return string(b)
	}
	vals := []string{t.TaskKey, t.Category, t.Subcategory, t.Question, t.Excellent, t.Good, t.Pass,
		t.IncorrectAnswerDirection, t.Reference, encode(t.Turns), t.SystemPrompt, t.UseCase, encode(t.Tags),
		t.Constraints, t.Examples, t.JudgeInstructions, t.Comments, t.InputData, t.PromptTemplate,
		encode(t.Checks), encode(t.Metadata)}
	return vals, jsonErr
}

// insertTasks inserts rows (valid and normalised), created and updated at
// now, without GORM's per-row reflection: on PostgreSQL one INSERT … SELECT
// FROM unnest(arrays) per pgTaskChunk tasks, on SQLite one prepared
// single-row INSERT run per task. Call it in a transaction; the error of a
// repeated task_key is gorm.ErrDuplicatedKey. Row ids are not read back.
func (s *Store) insertTasks(ctx context.Context, rows []Task, now time.Time) error {
	if len(rows) == 0 {
		return nil
	}
	var err error
	if s.dialect == Postgres {
		err = s.insertTasksPg(ctx, rows, now)
	} else {
		err = s.insertTasksSQLite(ctx, rows, now)
	}
	if err != nil {
		return s.translate(err)
	}
	return nil
}

func (s *Store) insertTasksPg(ctx context.Context, rows []Task, now time.Time) error {
	cols := make([]string, len(taskColumns))
	casts := make([]string, len(taskColumns))
	for i := range taskColumns {
		cols[i] = fmt.Sprintf("c%d", i)
		casts[i] = "?::text[]"
	}
	text := s.placeholders(`INSERT INTO tasks (` + strings.Join(taskColumns, ", ") + `, created_at, updated_at)
		SELECT ` + strings.Join(cols, ", ") + `, ?::timestamptz, ?::timestamptz
		FROM unnest(` + strings.Join(casts, ", ") + `) AS u(` + strings.Join(cols, ", ") + `)`)
	for start := 0; start < len(rows); start += pgTaskChunk {
		chunk := rows[start:min(start+pgTaskChunk, len(rows))]
		arrays := make([][]string, len(taskColumns))
		for i := range arrays {
			arrays[i] = make([]string, len(chunk))
		}
		for r := range chunk {
			vals, err := taskValues(&chunk[r])
			if err != nil {
				return err
			}
			for i, v := range vals {
				arrays[i][r] = v
			}
		}
		args := []any{now, now}
		for _, a := range arrays {
			args = append(args, a)
		}
		if _, err := s.conn(ctx).Statement.ConnPool.ExecContext(ctx, text, args...); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) insertTasksSQLite(ctx context.Context, rows []Task, now time.Time) error {
	marks := strings.Repeat("?, ", len(taskColumns)+1) + "?"
	stmt, err := s.conn(ctx).Statement.ConnPool.PrepareContext(ctx, `INSERT INTO tasks (`+
		strings.Join(taskColumns, ", ")+`, created_at, updated_at) VALUES (`+marks+`)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	args := make([]any, len(taskColumns)+2)
	args[len(taskColumns)], args[len(taskColumns)+1] = now, now
	for r := range rows {
		vals, err := taskValues(&rows[r])
		if err != nil {
			return err
		}
		for i, v := range vals {
			args[i] = v
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}
