package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// answerLengthOf is the SQL of an answer's length, what each score's
// answer_length holds: the characters of the answer text given, none for
// NULL.
func answerLengthOf(answer string) string { return "LENGTH(COALESCE(" + answer + ", ''))" }

// ScoreView is one score as the API lists it.
type ScoreView struct {
	ID        int64   `json:"-"`
	ItemID    int64   `json:"item_id"`
	TaskID    string  `json:"task_id" gorm:"column:task_key"`
	Model     string  `json:"model"`
	Judge     string  `json:"judge"`
	Metric    string  `json:"metric"`
	Score     float64 `json:"score"`
	Reasoning string  `json:"reasoning"`
	// Note says what of the judge's reply could not be kept (Score.Note).
	Note string `json:"note,omitempty"`
}

// ScoreFilter narrows and pages a run's scores.
type ScoreFilter struct {
	Model   string
	Judge   string // a judge's name or id, or check:<type>
	Metric  string
	Page    int
	PerPage int
}

// RunScores lists a run's scores in id order, filtered and paginated.
func (s *Store) RunScores(ctx context.Context, runID int64, f ScoreFilter) (Page[ScoreView], error) {
	page, perPage := normPage(f.Page, f.PerPage, 100)
	out := Page[ScoreView]{Page: page, PerPage: perPage, Items: []ScoreView{}}
	q := s.conn(ctx).Table("scores sc").Where("sc.run_id = ?", runID)
	if f.Metric != "" {
		q = q.Where("sc.metric = ?", f.Metric)
	}
	if f.Model != "" {
		q = q.Where("sc.item_id IN (SELECT i.id FROM items i JOIN run_targets tg ON tg.id = i.run_target_id WHERE i.run_id = ? AND tg.model = ?)", runID, f.Model)
	}
	if f.Judge != "" {
		if strings.HasPrefix(f.Judge, "check:") || f.Judge == "measure" {
			q = q.Where("sc.source = ?", f.Judge)
		} else {
			var ids []int64
			jq := s.conn(ctx).Model(&RunJudge{}).Where("run_id = ?", runID)
			if id, err := strconv.ParseInt(f.Judge, 10, 64); err == nil {
				jq = jq.Where("id = ? OR judge_id = ? OR name = ?", id, id, f.Judge)
			} else {
				jq = jq.Where("name = ?", f.Judge)
			}
			if err := jq.Pluck("id", &ids).Error; err != nil {
				return out, fmt.Errorf("store: filter scores by judge: %w", err)
			}
			q = q.Where("sc.run_judge_id IN ?", append(ids, 0))
		}
	}
	if err := q.Count(&out.Total).Error; err != nil {
		return out, fmt.Errorf("store: count scores: %w", err)
	}
	err := q.Select(`sc.id, sc.item_id, rt.task_key, tg.model,
			COALESCE(j.name, sc.source) AS judge, sc.metric, sc.score, sc.reasoning, sc.note`).
		Joins("JOIN items i ON i.id = sc.item_id").
		Joins("JOIN run_tasks rt ON rt.id = i.run_task_id").
		Joins("JOIN run_targets tg ON tg.id = i.run_target_id").
		Joins("LEFT JOIN run_judges j ON j.id = sc.run_judge_id").
		Order("sc.id").Offset((page - 1) * perPage).Limit(perPage).Scan(&out.Items).Error
	if err != nil {
		return out, fmt.Errorf("store: run scores: %w", err)
	}
	return out, nil
}

// ItemScores lists every score of one item in id order.
func (s *Store) ItemScores(ctx context.Context, itemID int64) ([]ScoreView, error) {
	out := []ScoreView{}
	err := s.conn(ctx).Table("scores sc").
		Select("sc.id, sc.item_id, COALESCE(j.name, sc.source) AS judge, sc.metric, sc.score, sc.reasoning, sc.note").
		Joins("LEFT JOIN run_judges j ON j.id = sc.run_judge_id").
		Where("sc.item_id = ?", itemID).Order("sc.id").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: item scores: %w", err)
	}
	return out, nil
}

// GradeInput is a human's grade of an item.
type GradeInput struct {
	Grade string `json:"grade"`
	Notes string `json:"notes"`
}

// SetGrade stores a human grade; the last write wins.
func (s *Store) SetGrade(ctx context.Context, itemID int64, in GradeInput) (*Grade, error) {
	in.Grade = strings.ToLower(strings.TrimSpace(in.Grade))
	switch in.Grade {
	case GradeCorrect, GradePartial, GradeWrong:
	default:
		return nil, invalid("grade", "must be correct, partial or wrong")
	}
	if len(in.Notes) > 10_000 {
		return nil, invalid("notes", "is longer than 10,000 characters")
	}
	var it Item
	if err := s.conn(ctx).Select("id", "run_id").Take(&it, itemID).Error; err != nil {
		return nil, fmt.Errorf("store: grade: %w", notFound(err, "item", itemID))
	}
	g := Grade{ItemID: itemID, RunID: it.RunID, Grade: in.Grade, Notes: in.Notes, UpdatedAt: s.now()}
	err := s.conn(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "item_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"grade", "notes", "updated_at"})}).Create(&g).Error
	if err != nil {
		return nil, fmt.Errorf("store: grade: %w", err)
	}
	return &g, nil
}

// ItemGrade returns an item's grade, or nil when it has none.
func (s *Store) ItemGrade(ctx context.Context, itemID int64) (*Grade, error) {
	var g Grade
	err := s.conn(ctx).Take(&g, "item_id = ?", itemID).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: item grade: %w", err)
	}
	return &g, nil
}

// JudgedGrade pairs a judge's overall score of a graded item with its human grade.
type JudgedGrade struct {
	RunJudgeID int64
	Score      float64
	Grade      string
}

// JudgePairCount counts a run's items that judge A scored ScoreA and judge
// B scored ScoreB (their overall scores).
type JudgePairCount struct {
	JudgeA, JudgeB int64
	ScoreA, ScoreB float64
	N              int64
}

// JudgeAgreement is what the agreement statistics read from a run: every
// judge's overall score of each graded item, with its grade, and how often
// each two judges gave each two scores to one item.
type JudgeAgreement struct {
	Graded []JudgedGrade
	Pairs  []JudgePairCount
}

// RunJudgeAgreement reads a run's JudgeAgreement. The pairs are counted in
// the database, so a run of a million verdicts sends back a few hundred
// rows; a run judged by one judge has none.
func (s *Store) RunJudgeAgreement(ctx context.Context, runID int64) (*JudgeAgreement, error) {
	out := &JudgeAgreement{Graded: []JudgedGrade{}, Pairs: []JudgePairCount{}}
	err := s.conn(ctx).Table("scores sc").
		Select("sc.run_judge_id, sc.score, g.grade").
		Joins("JOIN grades g ON g.item_id = sc.item_id").
		Where("g.run_id = ? AND sc.run_id = ? AND sc.metric = 'score' AND sc.run_judge_id IS NOT NULL", runID, runID).
		Order("sc.item_id, sc.run_judge_id").Scan(&out.Graded).Error
	if err != nil {
		return nil, fmt.Errorf("store: graded judge scores: %w", err)
	}
	var judges int64
	if err := s.conn(ctx).Model(&RunJudge{}).Where("run_id = ?", runID).Count(&judges).Error; err != nil {
		return nil, fmt.Errorf("store: judge pairs: %w", err)
	}
	if judges < 2 {
		return out, nil
	}
	err = s.conn(ctx).Raw(`SELECT a.run_judge_id AS judge_a, b.run_judge_id AS judge_b, a.score AS score_a, b.score AS score_b, COUNT(*) AS n
		FROM scores a JOIN scores b ON b.item_id = a.item_id AND b.metric = 'score' AND b.run_judge_id < a.run_judge_id
		WHERE a.run_id = ? AND b.run_id = ? AND a.metric = 'score'
		GROUP BY a.run_judge_id, b.run_judge_id, a.score, b.score`, runID, runID).Scan(&out.Pairs).Error
	if err != nil {
		return nil, fmt.Errorf("store: judge pairs: %w", err)
	}
	return out, nil
}

// GradeStamp changes whenever a grade of the run is added or changed: the
// count of its grades and the latest change.
func (s *Store) GradeStamp(ctx context.Context, runID int64) (string, error) {
	var row struct {
		N    int64
		Last *string
	}
	err := s.conn(ctx).Model(&Grade{}).Select("COUNT(*) AS n, CAST(MAX(updated_at) AS TEXT) AS last").
		Where("run_id = ?", runID).Scan(&row).Error
	if err != nil {
		return "", fmt.Errorf("store: grade stamp: %w", err)
	}
	last := ""
	if row.Last != nil {
		last = *row.Last
	}
	return fmt.Sprintf("%d@%s", row.N, last), nil
}
