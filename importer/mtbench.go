package importer

import (
	"strings"
)

// parseMTBench reads FastChat's MT-Bench question.jsonl: {"question_id": 81,
// "category": "writing", "turns": ["…", "…"], "reference": ["…", "…"]}. The
// id is "mtbench-<question_id>" (stable across re-imports); turns are the
// task's turns and the question is the first; the first reference is the
// reference and the full list is kept in Metadata["references"]. Other
// fields map as in JSONL.
func parseMTBench(data []byte) ([]row, Errors) {
	return eachJSONRecord(data, func(obj *value, b *builder) {
		qid := obj.get("question_id")
		if qid.empty() || qid.kind != scalar {
			b.fail(qid, "question_id", "is required and must be a number or text")
			return
		}
		if obj.get("turns").empty() {
			b.fail(nil, "turns", "is required")
			return
		}
		b.t.TaskKey = "mtbench-" + strings.TrimSpace(qid.text)
		b.from["task_id"] = "question_id"
		for i, k := range obj.keys {
			if k != "question_id" {
				b.set(k, obj.vals[i])
			}
		}
	})
}
