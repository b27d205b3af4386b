package store

import (
	"context"
	"fmt"
	"time"
)

// TrendPoint is one model's mean score in one run.
type TrendPoint struct {
	RunID     int64     `json:"run_id"`
	RunName   string    `json:"run"`
	CreatedAt time.Time `json:"created_at"`
	Model     string    `json:"model"`
	Score     *float64  `json:"score"`
	PassRate  *float64  `json:"pass_rate" gorm:"-"`
	Scored    int64     `json:"scored"`
	Passed    int64     `json:"passed"`
}

// trendRuns bounds a trend to the latest runs.
const trendRuns = 30

// CollectionTrend lists each model's mean score in the latest finished runs
// of a collection, oldest first, for the score trend chart.
func (s *Store) CollectionTrend(ctx context.Context, collectionID int64) ([]TrendPoint, error) {
	var out []TrendPoint
	// The pass threshold is the middle of each run's judges' scale (0.5 for checks only).
	err := s.conn(ctx).Raw(`SELECT r.id AS run_id, r.name AS run_name, r.created_at, tg.model,
			AVG(i.score) AS score, COUNT(i.score) AS scored,
			SUM(CASE WHEN i.score >= COALESCE((SELECT (j.scale_min + j.scale_max) / 2.0 FROM run_judges j WHERE j.run_id = r.id ORDER BY j.position LIMIT 1), 0.5)
				THEN 1 ELSE 0 END) AS passed
		FROM runs r
		JOIN items i ON i.run_id = r.id
		JOIN run_targets tg ON tg.id = i.run_target_id
		WHERE r.id IN (SELECT rc.run_id FROM run_collections rc JOIN runs rr ON rr.id = rc.run_id
			WHERE rc.collection_id = ? AND rr.status = 'FINISHED' AND rr.deleted_at IS NULL ORDER BY rc.run_id DESC LIMIT ?)
		GROUP BY r.id, r.name, r.created_at, tg.model
		ORDER BY r.id, tg.model`, collectionID, trendRuns).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: collection trend: %w", err)
	}
	for i := range out {
		if out[i].Scored > 0 {
			r := float64(out[i].Passed) / float64(out[i].Scored)
			out[i].PassRate = &r
		}
	}
	return out, nil
}
