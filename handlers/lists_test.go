package handlers_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"tribunal/store"
	"tribunal/store/storetest"
)

// texts lists the trimmed text of each selected element.
func texts(s *goquery.Selection) []string {
	var out []string
	s.Each(func(_ int, e *goquery.Selection) { out = append(out, strings.TrimSpace(e.Text())) })
	return out
}

func attrs(s *goquery.Selection, name string) []string {
	var out []string
	s.Each(func(_ int, e *goquery.Selection) { out = append(out, e.AttrOr(name, "")) })
	return out
}

// The tasks list says what each task has to be judged against, shows its
// tags, and an empty list points to Import as well as to the form.
func TestTasksListReferencesTagsAndEmptyState(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), nil)

	_, doc, _ := a.get(t, "/tasks")
	empty := doc.Find("[data-testid=empty-tasks]")
	if empty.Find("a[href='/import']").Length() != 1 || empty.Find("a[href='#add-task']").Length() != 1 {
		t.Errorf("empty state links: %q", empty.Text())
	}
	if doc.Find("details#add-task[open] [data-testid=task-form]").Length() != 1 {
		t.Errorf("the form is not open under an empty list")
	}

	ctx := t.Context()
	if _, err := a.st.CreateTask(ctx, store.TaskInput{TaskKey: "full", Category: "c", Question: "2+2?", Reference: "4",
		Good: "four", IncorrectAnswerDirection: "anything but 4", Tags: []string{"math", "easy one"},
		Checks: []store.Check{{Type: "numeric"}, {Type: "rouge_l"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.st.CreateTask(ctx, store.TaskInput{TaskKey: "bare", Category: "c", Question: "Say hi"}); err != nil {
		t.Fatal(err)
	}
	_, doc, _ = a.get(t, "/tasks")
	row := func(key string) *goquery.Selection {
		return doc.Find("[data-testid=tasks-table] tbody tr").FilterFunction(func(_ int, r *goquery.Selection) bool {
			return r.Find("td code").First().Text() == key
		})
	}
	full := row("full")
	refs := full.Find("[data-testid=task-refs] [data-ref]")
	if got, want := attrs(refs, "data-ref"), []string{"reference", "good", "incorrect", "check:numeric", "check:rouge_l"}; !slices.Equal(got, want) {
		t.Errorf("references %v, want %v", got, want)
	}
	if got, want := texts(refs), []string{"Reference", "Good", "Incorrect direction", "Numeric", "ROUGE-L"}; !slices.Equal(got, want) {
		t.Errorf("reference words %v, want %v", got, want)
	}
	if got := strings.TrimSpace(row("bare").Find("[data-testid=task-refs]").Text()); got != "none" {
		t.Errorf("a task without references shows %q", got)
	}
	tags := full.Find("[data-testid=task-tags] a")
	if got := texts(tags); !slices.Equal(got, []string{"math", "easy one"}) {
		t.Errorf("tags %v", got)
	}
	if got := tags.Last().AttrOr("href", ""); got != "/tasks?tag=easy+one" {
		t.Errorf("tag link %q", got)
	}
	if row("bare").Find("[data-testid=task-tags] a").Length() != 0 {
		t.Errorf("an untagged task shows tags")
	}
	// The tag link filters the list.
	_, doc, _ = a.get(t, "/tasks?tag=easy+one")
	if got := texts(doc.Find("[data-testid=tasks-table] tbody tr td code")); !slices.Equal(got, []string{"full"}) {
		t.Errorf("tasks tagged 'easy one': %v", got)
	}
	// The form names check types in words and keeps the raw type as the value.
	if l := doc.Find("[data-testid=checks] input[value=rouge_l]").Parent(); strings.TrimSpace(l.Text()) != "ROUGE-L" {
		t.Errorf("check label %q", l.Text())
	}
}
