package checks_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tribunal/checks"
)

// Real GSM8K test rows (openai/grade-school-math test.jsonl lines 0, 2, 146
// and 201, as in shared/datasets/gsm8k_test_300.jsonl): the reference is the
// worked solution ending in "#### N".
const (
	gsm0   = "Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\nShe makes 9 * 2 = $<<9*2=18>>18 every day at the farmer’s market.\n#### 18"
	gsm2   = "The cost of the house and repairs came out to 80,000+50,000=$<<80000+50000=130000>>130,000\nHe increased the value of the house by 80,000*1.5=<<80000*1.5=120000>>120,000\nSo the new value of the house is 120,000+80,000=$<<120000+80000=200000>>200,000\nSo he made a profit of 200,000-130,000=$<<200000-130000=70000>>70,000\n#### 70000"
	gsm146 = "The first set had 500 pieces, and the second set had 3 times as many as the first set, so the second set has 500*3=<<500*3=1500>>1500 pieces\nThe third set had one-quarter of the 500 pieces, so that means it had 500*.25= <<500*.25=125>>125 pieces\nIn total, that means Johnny picked up 500 + 1500+ 125= <<500+1500+125=2125>>2125 blocks\n#### 2,125"
	gsm201 = "He makes 2000*52=$<<2000*52=104000>>104,000 a year\nSo the raise is worth .05*104,000=$<<.05*104000=5200>>5200\nSo he makes 104,000+5200=$<<104000+5200=109200>>109,200 from his salary\nSo in total he made 109,200+5,000=$<<109200+5000=114200>>114,200\n#### 114,200"
)

func TestNumeric(t *testing.T) {
	runTable(t, []runCase{
		// GSM8K references: the number after "####" is expected, not the last one
		// in the worked solution.
		{"gsm8k answer is", checks.Numeric, "She sells 9 eggs at $2 each. The answer is 18.", gsm0, 1, "expected 18, found 18"},
		{"gsm8k hash marker", checks.Numeric, "9 * 2 = 18\n#### 18", gsm0, 1, "after ####"},
		{"gsm8k wrong", checks.Numeric, "She eats 3 and bakes 4, so she sells 16 eggs: $32.", gsm0, 0, "expected 18, found $32"},
		{"gsm8k dollars and commas", checks.Numeric, "So the answer is $70,000.", gsm2, 1, "expected 70000, found $70,000"},
		{"gsm8k boxed", checks.Numeric, `The profit is \boxed{70000} dollars, from 200000 - 130000.`, gsm2, 1, `in \boxed{}`},
		{"gsm8k last number after subtraction", checks.Numeric, "profit = 200,000-130,000=70,000", gsm2, 1, "last number"},
		{"gsm8k off by a digit", checks.Numeric, "The answer is 7000", gsm2, 0, "expected 70000, found 7000"},
		{"gsm8k comma reference", checks.Numeric, "Johnny picked up 2125 blocks.", gsm146, 1, "expected 2,125, found 2125"},
		{"gsm8k decimals", checks.Numeric, "Answer: $114,200.00", gsm201, 1, ""},
		{"gsm8k answer against its own solution", checks.Numeric, gsm201, gsm201, 1, ""},
		// Plain references: the last number in the reference.
		{"plain", checks.Numeric, "42", "42", 1, ""},
		{"reference last number", checks.Numeric, "7", "3 + 4 = 7", 1, ""},
		{"negative", checks.Numeric, "It drops to -5 degrees.", "-5", 1, ""},
		{"unicode minus", checks.Numeric, "x = −5", "-5", 1, ""},
		{"hyphen is not a sign", checks.Numeric, "See COVID-19", "19", 1, ""},
		{"minus after parenthesis is not a sign", checks.Numeric, "total = (5+5)-2", "2", 1, ""},
		{"fraction", checks.Numeric, "3/4 of the cake", "0.75", 1, ""},
		{"latex fraction", checks.Numeric, `$\boxed{\frac{3}{4}}$`, "0.75", 1, ""},
		{"percent", checks.Numeric, "That is a 25% raise.", "#### 25", 1, ""},
		{"trailing zeros", checks.Numeric, "2.50", "2.5", 1, ""},
		{"leading dot", checks.Numeric, "about .5", "0.5", 1, ""},
		{"within tolerance", checks.Numeric, "1000000.5", "1000000", 1, ""},
		{"outside tolerance", checks.Numeric, "1000002", "1000000", 0, ""},
		{"zero", checks.Numeric, "0", "0.0", 1, ""},
		{"answer beats later numbers", checks.Numeric, "The answer is 12. Check: 12*2=24", "12", 1, `after "answer"`},
		{"answer on next line", checks.Numeric, "Final Answer:\n**12**\nsteps 1 2 3", "12", 1, ""},
		{"last answer marker wins", checks.Numeric, "My first answer is 10. Wait, the answer is 11.", "11", 1, ""},
		{"no number", checks.Numeric, "I do not know.", "12", 0, "found no number"},
		{"list is not thousands", checks.Numeric, "1,2,3", "3", 1, ""},
		{"division by zero ignored", checks.Numeric, "7 then 5/0", "7", 1, ""},
	}, 0)
}

// Every GSM8K solution in the dataset (importer/testdata) scores 1 against
// itself and 0 against the next row's (when the answers differ).
func TestNumericGSM8KDataset(t *testing.T) {
	path := filepath.Join("..", "importer", "testdata", "datasets", "gsm8k_test_300.jsonl")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var answers []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var row struct{ Answer string }
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		answers = append(answers, row.Answer)
	}
	if len(answers) < 100 {
		t.Fatalf("read %d rows, want 300", len(answers))
	}
	final := func(s string) string { return strings.TrimSpace(s[strings.LastIndex(s, "####")+4:]) }
	for i, a := range answers {
		got, err := checks.Run(checks.Numeric, checks.Answer{Text: a}, a)
		if err != nil || got.Score != 1 {
			t.Errorf("row %d against itself: %+v, %v", i, got, err)
		}
		b := answers[(i+1)%len(answers)]
		if strings.ReplaceAll(final(a), ",", "") == strings.ReplaceAll(final(b), ",", "") {
			continue
		}
		if got, _ := checks.Run(checks.Numeric, checks.Answer{Text: b}, a); got.Score != 0 {
			t.Errorf("row %d against row %d: %+v", i, (i+1)%len(answers), got)
		}
	}
}
