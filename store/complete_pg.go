package store

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm/clause"
)

// completeAllOnce is CompleteAll in one PostgreSQL statement, whose text
// depends on what the completions write (their SET list) and not on how
// many there are (River's batch completer): the completions' values go as
// one array per column, unnested; their updates, then the scores and
// violations of the updates that took; a claim of as many successors as
// the written completions ask for; and one result, the ids written, on
// every successor's row. So one prepared plan serves every batch size.
// The completions must share a SET list (see pgSetShape).
func (s *Store) completeAllOnce(ctx context.Context, cs []*Completion, next *ClaimParams, now time.Time) error {
	shape, _ := pgSetShape(cs[0].updates)
	values := make([][]any, len(cs))
	ids, statuses, workers, attempts := make([]int64, len(cs)), make([]string, len(cs)), make([]string, len(cs)), make([]int64, len(cs))
	wants := make([]bool, len(cs))
	var sc pgScores
	var vi pgViolations
	for i, c := range cs {
		_, values[i] = pgSetShape(c.updates)
		ids[i], statuses[i], workers[i], attempts[i], wants[i] = c.Item.ID, string(c.Item.Status), c.Item.WorkerID, int64(c.Item.Attempts), c.Next
		sc.add(c.Item.ID, c.scores)
		vi.add(c.Item.ID, c.violations)
	}
	cols, types, err := pgColumns(values)
	if err != nil {
		return fmt.Errorf("store: complete %d item(s): %w", len(cs), err)
	}
	sets, unnest := pgSetList(shape, types)
	args := append([]any{ids, statuses, workers, attempts, wants}, cols...)
	args = append(args, now, sc.item, sc.judge, sc.source, sc.metric, sc.score, sc.reasoning, sc.raw, sc.note,
		now, vi.item, vi.judge, vi.category, vi.detail)
	text := `WITH v AS (SELECT * FROM unnest(?::bigint[], ?::text[], ?::text[], ?::bigint[], ?::boolean[]` + unnest + `)
			AS v(k_id, k_status, k_worker, k_attempts, k_next` + pgColumnNames(len(types)) + `)),
		done AS (UPDATE items SET ` + sets + ` FROM v
			WHERE items.id = v.k_id AND items.status = v.k_status AND items.worker_id = v.k_worker AND items.attempts = v.k_attempts
			RETURNING items.id, items.run_id, items.run_target_id, ` + answerLengthOf("items.response") + ` AS answer_length, v.k_next),
		saved AS (INSERT INTO scores (run_id, item_id, run_target_id, answer_length, run_judge_id, source, metric, score, reasoning, raw, note, created_at)
			SELECT done.run_id, done.id, done.run_target_id, done.answer_length, s.judge, s.source, s.metric, s.score, s.reasoning, s.raw, s.note, ?
			FROM unnest(?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::double precision[], ?::text[], ?::text[], ?::text[])
				AS s(item, judge, source, metric, score, reasoning, raw, note)
			JOIN done ON done.id = s.item),
		violated AS (INSERT INTO violations (run_id, item_id, run_judge_id, category, detail, created_at)
			SELECT done.run_id, done.id, x.judge, x.category, x.detail, ?
			FROM unnest(?::bigint[], ?::bigint[], ?::text[], ?::text[]) AS x(item, judge, category, detail)
			JOIN done ON done.id = x.item)`
	result := ` SELECT COALESCE((SELECT string_agg(id::text, ',') FROM done), '') AS written`
	withSuccessor := next != nil && slices.Contains(wants, true)
	if withSuccessor {
		k := "(SELECT COUNT(*) FROM done WHERE k_next)"
		claim, claimArgs := s.claimSQL(*next, k, k)
		text += `, successor AS (` + claim + `)`
		args = append(args, claimArgs...)
		result += `, ` + itemColumnsOrAbsent("successor") + ` FROM (SELECT 1) AS one LEFT JOIN successor ON true`
	}
	written, successors, err := s.scanCompletion(ctx, text+result, args, withSuccessor)
	if err != nil {
		return fmt.Errorf("store: complete %d item(s): %w", len(cs), err)
	}
	for _, c := range cs {
		if !written[c.Item.ID] {
			c.Err = leaseLost(c.Item)
		}
	}
	give(cs, successors)
	return nil
}

// scanCompletion runs the completion statement and reads the ids it wrote
// and, withSuccessor, the successor it claimed (one row either way).
func (s *Store) scanCompletion(ctx context.Context, text string, args []any, withSuccessor bool) (written map[int64]bool, successors []Item, err error) {
	rows, err := s.rawQuery(ctx, text, args...)
	if err != nil {
		return nil, nil, err
	}
	var list string
	if withSuccessor {
		err = scanItems(rows, []any{&list}, func(it Item) {
			if it.ID != 0 {
				successors = append(successors, it)
			}
		})
	} else {
		err = scanOne(rows, &list)
	}
	if err != nil {
		return nil, nil, err
	}
	written = map[int64]bool{}
	for f := range strings.SplitSeq(list, ",") {
		if id, err := strconv.ParseInt(f, 10, 64); err == nil {
			written[id] = true
		}
	}
	return written, successors, nil
}

// byPgSetShape splits completions into runs that share a SET list, each
// written by one statement, in their order.
func byPgSetShape(cs []*Completion) [][]*Completion {
	var groups [][]*Completion
	index := map[string]int{}
	for _, c := range cs {
		shape, _ := pgSetShape(c.updates)
		i, ok := index[shape]
		if !ok {
			i = len(groups)
			index[shape] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], c)
	}
	return groups
}

// pgSetShape renders updates as a SET list whose values are placeholders
// (NULL for an untyped nil), in a fixed column order, with the values in
// placeholder order: completions of one kind share the list.
func pgSetShape(updates map[string]any) (string, []any) {
	cols := make([]string, 0, len(updates))
	for c := range updates {
		cols = append(cols, c)
	}
	slices.Sort(cols)
	var values []any
	sets := make([]string, len(cols))
	for i, c := range cols {
		switch v := updates[c].(type) {
		case clause.Expr:
			sets[i] = c + " = " + v.SQL
			values = append(values, v.Vars...)
		case nil:
			sets[i] = c + " = NULL"
		default:
			sets[i] = c + " = ?" + pgCasts[c]
			values = append(values, v)
		}
	}
	return strings.Join(sets, ", "), values
}

// pgCasts are the item columns that a text value does not assign to.
var pgCasts = map[string]string{"request": "::jsonb"}

// pgSetList turns a SET shape's placeholders into the unnested columns
// c1, c2, … and returns it with the unnest arguments' list for them.
func pgSetList(shape string, types []string) (sets, unnest string) {
	var b, u strings.Builder
	n := 0
	for _, r := range shape {
		if r != '?' {
			b.WriteRune(r)
			continue
		}
		n++
		b.WriteString("v.c" + strconv.Itoa(n))
	}
	for _, t := range types {
		u.WriteString(", ?::" + t + "[]")
	}
	return b.String(), u.String()
}

func pgColumnNames(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(", c" + strconv.Itoa(i))
	}
	return b.String()
}

// pgColumns turns rows of values (one row per completion, all of one
// shape) into one typed slice per column, which pgx sends as an array, with
// the arrays' element types.
func pgColumns(rows [][]any) ([]any, []string, error) {
	if len(rows) == 0 {
		return nil, nil, nil
	}
	cols := make([]any, len(rows[0]))
	types := make([]string, len(rows[0]))
	for j := range rows[0] {
		col := make([]any, len(rows))
		for i, row := range rows {
			col[i] = row[j]
		}
		var err error
		if cols[j], types[j], err = pgArray(col); err != nil {
			return nil, nil, err
		}
	}
	return cols, types, nil
}

// pgArray is one column of values as a typed slice, with its element type.
func pgArray(vals []any) (any, string, error) {
	t := reflect.TypeOf(vals[0])
	for _, v := range vals {
		if reflect.TypeOf(v) != t {
			return nil, "", fmt.Errorf("values of types %v and %T in one column", t, v)
		}
	}
	switch vals[0].(type) {
	case *string:
		return typed[*string](vals), "text", nil
	case *float64:
		return typed[*float64](vals), "double precision", nil
	case float64:
		return typed[float64](vals), "double precision", nil
	case time.Time:
		return typed[time.Time](vals), "timestamptz", nil
	case *time.Time:
		return typed[*time.Time](vals), "timestamptz", nil
	case bool:
		return typed[bool](vals), "boolean", nil
	}
	switch t.Kind() {
	case reflect.String: // string and the named string types (statuses, sources)
		out := make([]string, len(vals))
		for i, v := range vals {
			out[i] = reflect.ValueOf(v).String()
		}
		return out, "text", nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		out := make([]int64, len(vals))
		for i, v := range vals {
			out[i] = reflect.ValueOf(v).Int()
		}
		return out, "bigint", nil
	}
	return nil, "", fmt.Errorf("no array type for %v", t)
}

func typed[T any](vals []any) []T {
	out := make([]T, len(vals))
	for i, v := range vals {
		out[i] = v.(T)
	}
	return out
}

// pgScores are a batch's scores as the arrays the statement unnests.
type pgScores struct {
	item                                 []int64
	judge                                []*int64
	source, metric, reasoning, raw, note []string
	score                                []float64
}

func (p *pgScores) add(itemID int64, scores []Score) {
	for _, sc := range scores {
		p.item = append(p.item, itemID)
		p.judge = append(p.judge, sc.RunJudgeID)
		p.source, p.metric, p.score = append(p.source, sc.Source), append(p.metric, sc.Metric), append(p.score, sc.Score)
		p.reasoning, p.raw, p.note = append(p.reasoning, sc.Reasoning), append(p.raw, sc.Raw), append(p.note, sc.Note)
	}
}

// pgViolations are a batch's violations as the arrays the statement unnests.
type pgViolations struct {
	item, judge      []int64
	category, detail []string
}

func (p *pgViolations) add(itemID int64, vs []Violation) {
	for _, v := range vs {
		p.item, p.judge = append(p.item, itemID), append(p.judge, v.RunJudgeID)
		p.category, p.detail = append(p.category, v.Category), append(p.detail, v.Detail)
	}
}
