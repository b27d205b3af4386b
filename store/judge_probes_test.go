package store_test

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// JudgeProbes tallies each judge's (score, answer length) pairs and finds
// the answers a judge judged more than once, as the verdicts read one by one
// say: on a run with two judges, two repeats, identical answers within and
// across models, empty and missing answers, and verdicts of other metrics
// and of checks, on both databases.
func TestJudgeProbesMatchTheVerdicts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		run := makeRun(t, st, 6, 3)
		first := run.Judges[0].ID
		storetest.Exec(t, st, `INSERT INTO run_judges (run_id, position, name, provider_name, model)
			SELECT run_id, position + 1, 'second', provider_name, model FROM run_judges WHERE id = ?`, first)
		var second int64
		if err := storetest.DB(t, st).QueryRow(`SELECT MAX(id) FROM run_judges`).Scan(&second); err != nil {
			t.Fatal(err)
		}
		storetest.Exec(t, st, `INSERT INTO items (run_id, run_task_id, run_target_id, repeat_index, status, request, updated_at)
			SELECT run_id, run_task_id, run_target_id, 2, status, request, updated_at FROM items WHERE run_id = ?`, run.ID)
		// Answers repeat within a task (a few distinct texts per task), one
		// is empty and some are missing.
		storetest.Exec(t, st, `UPDATE items SET response = CASE
			WHEN id % 11 = 0 THEN NULL WHEN id % 13 = 0 THEN '' ELSE 'answer ' || (id % 3) || ' ' || SUBSTR('xxxxxxxxxx', 1, CAST(id % 4 AS INTEGER)) END
			WHERE run_id = ?`, run.ID)
		if st.Dialect() == store.Postgres {
			// Two texts of one hash, which PostgreSQL groups the answers
			// by first, are two answers, not one judged twice: a model's
			// two repeats of one task give them.
			var a, b string
			if err := storetest.DB(t, st).QueryRow(`SELECT MIN(s), MAX(s) FROM (SELECT 'collide ' || g AS s FROM generate_series(1, 300000) g) x
				GROUP BY hashtext(s) HAVING COUNT(*) > 1 LIMIT 1`).Scan(&a, &b); err != nil {
				t.Fatal(err)
			}
			storetest.Exec(t, st, `UPDATE items SET response = CASE WHEN repeat_index = 1 THEN ? ELSE ? END
				WHERE run_id = ? AND run_task_id = (SELECT MIN(run_task_id) FROM items WHERE run_id = ?)
				AND run_target_id = (SELECT MIN(run_target_id) FROM items WHERE run_id = ?)`, a, b, run.ID, run.ID, run.ID)
		}
		storetest.Exec(t, st, `INSERT INTO scores (run_id, item_id, run_target_id, answer_length, run_judge_id, source, metric, score, created_at)
			SELECT run_id, id, run_target_id, LENGTH(COALESCE(response, '')), ?, ?, 'score', (id * 7 % 5) + 1, CURRENT_TIMESTAMP FROM items WHERE run_id = ? AND id % 9 <> 0`,
			first, run.Judges[0].Source(), run.ID)
		storetest.Exec(t, st, `INSERT INTO scores (run_id, item_id, run_target_id, answer_length, run_judge_id, source, metric, score, created_at)
			SELECT run_id, id, run_target_id, LENGTH(COALESCE(response, '')), ?, ?, 'score', CASE WHEN id % 2 = 0 THEN 4 ELSE 8 END, CURRENT_TIMESTAMP FROM items WHERE run_id = ?`,
			second, store.RunJudge{ID: second}.Source(), run.ID)
		storetest.Exec(t, st, `INSERT INTO scores (run_id, item_id, run_target_id, answer_length, run_judge_id, source, metric, score, created_at)
			SELECT run_id, id, run_target_id, LENGTH(COALESCE(response, '')), ?, ?, 'accuracy', 3, CURRENT_TIMESTAMP FROM items WHERE run_id = ?`, first, run.Judges[0].Source(), run.ID)
		storetest.Exec(t, st, `INSERT INTO scores (run_id, item_id, run_target_id, source, metric, score, created_at)
			SELECT run_id, id, run_target_id, 'check:regex', 'score', 1, CURRENT_TIMESTAMP FROM items WHERE run_id = ?`, run.ID)

		got, err := st.JudgeProbes(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantLengths, wantRepeats := referenceProbes(t, st, run.ID)
		if fmt.Sprint(got.Lengths) != fmt.Sprint(wantLengths) {
			t.Errorf("lengths\n got %v\nwant %v", got.Lengths, wantLengths)
		}
		gotRepeats := slices.Clone(got.Repeats)
		slices.SortFunc(gotRepeats, compareRepeats)
		if fmt.Sprint(gotRepeats) != fmt.Sprint(wantRepeats) {
			t.Errorf("repeats\n got %v\nwant %v", gotRepeats, wantRepeats)
		}
		if len(wantRepeats) < 10 || len(wantLengths) < 10 {
			t.Errorf("%d repeats, %d length tallies: want a run varied enough for at least 10 of each", len(wantRepeats), len(wantLengths))
		}
	})
}

// referenceProbes reads every judge verdict with its answer and tallies
// them in Go.
func referenceProbes(t *testing.T, st *store.Store, runID int64) ([]store.JudgeLength, []store.JudgeRepeat) {
	t.Helper()
	rows, err := storetest.DB(t, st).Query(fmt.Sprintf(`SELECT sc.run_judge_id, sc.score, i.run_task_id, i.response
		FROM scores sc JOIN items i ON i.id = sc.item_id
		WHERE sc.run_id = %d AND sc.metric = 'score' AND sc.run_judge_id IS NOT NULL`, runID))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type answer struct {
		judge, task int64
		text        string
	}
	tally := map[store.JudgeLength]int64{}
	repeats := map[answer]*store.JudgeRepeat{}
	for rows.Next() {
		var judge, task int64
		var score float64
		var response sql.NullString
		if err := rows.Scan(&judge, &score, &task, &response); err != nil {
			t.Fatal(err)
		}
		tally[store.JudgeLength{RunJudgeID: judge, Score: score, Length: int64(len([]rune(response.String)))}]++
		if !response.Valid {
			continue
		}
		a := answer{judge, task, response.String}
		if r := repeats[a]; r != nil {
			r.N++
			r.MinScore, r.MaxScore = min(r.MinScore, score), max(r.MaxScore, score)
		} else {
			repeats[a] = &store.JudgeRepeat{RunJudgeID: judge, N: 1, MinScore: score, MaxScore: score}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var lengths []store.JudgeLength
	for l, n := range tally {
		l.N = n
		lengths = append(lengths, l)
	}
	slices.SortFunc(lengths, func(a, b store.JudgeLength) int {
		return cmp.Or(cmp.Compare(a.RunJudgeID, b.RunJudgeID), cmp.Compare(a.Score, b.Score), cmp.Compare(a.Length, b.Length))
	})
	var reps []store.JudgeRepeat
	for _, r := range repeats {
		if r.N > 1 {
			reps = append(reps, *r)
		}
	}
	slices.SortFunc(reps, compareRepeats)
	return lengths, reps
}

func compareRepeats(a, b store.JudgeRepeat) int {
	return cmp.Or(cmp.Compare(a.RunJudgeID, b.RunJudgeID), cmp.Compare(a.N, b.N),
		cmp.Compare(a.MinScore, b.MinScore), cmp.Compare(a.MaxScore, b.MaxScore))
}
