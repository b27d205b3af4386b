package handlers

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/store"
	"tribunal/views"
)

func (h *Handler) showCollections(c echo.Context) error {
	return h.renderCollections(c, http.StatusOK, views.CollectionForm{})
}

func (h *Handler) renderCollections(c echo.Context, status int, form views.CollectionForm) error {
	form.Filter = c.QueryParam("tag")
	cs, err := h.store.CollectionsTagged(c.Request().Context(), form.Filter)
	if err != nil {
		return err
	}
	if form.AllTags, err = h.store.AllTags(c.Request().Context()); err != nil {
		return err
	}
	return render(c, status, views.CollectionsPage(cs, form))
}

func (h *Handler) createCollection(c echo.Context) error {
	tags := store.ParseTags(c.FormValue("tags"))
	in := store.CollectionInput{Name: c.FormValue("name"), Description: c.FormValue("description"), Tags: &tags}
	col, err := h.store.CreateCollection(withoutCancel(c), in)
	if err != nil {
		if status, msg, ok := formProblem(err); ok {
			return h.renderCollections(c, status, views.CollectionForm{Name: in.Name, Desc: in.Description, Tags: c.FormValue("tags"), Error: msg})
		}
		return err
	}
	return redirectFlash(c, "Collection created.", fmt.Sprintf("/collections/%d", col.ID))
}

func (h *Handler) taskPicker(c echo.Context, id int64) (views.TaskPicker, error) {
	page, err := queryInt(c, "page")
	if err != nil {
		return views.TaskPicker{}, err
	}
	q := c.QueryParam("q")
	tasks, err := h.store.Tasks(c.Request().Context(), store.TaskFilter{Query: q, Page: page, PerPage: 50})
	if err != nil {
		return views.TaskPicker{}, err
	}
	ids := make([]int64, len(tasks.Items))
	for i, t := range tasks.Items {
		ids[i] = t.ID
	}
	member, err := h.store.CollectionMembers(c.Request().Context(), id, ids)
	if err != nil {
		return views.TaskPicker{}, err
	}
	return views.TaskPicker{CollectionID: id, Query: q, Page: tasks, Member: member}, nil
}

func (h *Handler) showCollection(c echo.Context) error {
	return h.renderCollection(c, http.StatusOK, "")
}

func (h *Handler) renderCollection(c echo.Context, status int, formErr string) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	col, err := h.store.Collection(c.Request().Context(), id)
	if err != nil {
		return err
	}
	picker, err := h.taskPicker(c, id)
	if err != nil {
		return err
	}
	form := views.CollectionForm{ID: id, Name: col.Name, Desc: col.Description, Error: formErr, Tags: strings.Join(col.Tags, ", ")}
	if formErr != "" {
		form.Name, form.Desc, form.Tags = c.FormValue("name"), c.FormValue("description"), c.FormValue("tags")
	}
	return render(c, status, views.CollectionPage(col, form, picker))
}

func (h *Handler) collectionPicker(c echo.Context) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	picker, err := h.taskPicker(c, id)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.TaskPickerView(picker))
}

func (h *Handler) renameCollection(c echo.Context) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	in := store.CollectionInput{Name: c.FormValue("name"), Description: c.FormValue("description")}
	if form, _ := c.FormParams(); form.Has("tags") {
		tags := store.ParseTags(form.Get("tags"))
		in.Tags = &tags
	}
	if _, err := h.store.UpdateCollection(withoutCancel(c), id, in); err != nil {
		if status, msg, ok := formProblem(err); ok {
			return h.renderCollection(c, status, msg)
		}
		return err
	}
	return redirectFlash(c, "Collection saved.", fmt.Sprintf("/collections/%d", id))
}

// toggleCollectionTask adds the task when its checkbox is ticked (the form
// carries member=1) and removes it otherwise; it answers the new count.
func (h *Handler) toggleCollectionTask(c echo.Context) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	taskID, err := pathID(c, "task")
	if err != nil {
		return err
	}
	ref := []store.TaskRef{{ID: taskID}}
	var col *store.CollectionDetail
	if c.FormValue("member") != "" {
		col, err = h.store.PatchCollectionTasks(withoutCancel(c), id, ref, nil)
	} else {
		col, err = h.store.PatchCollectionTasks(withoutCancel(c), id, nil, ref)
	}
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.CollectionCount(col.ID, col.TaskCount))
}

func (h *Handler) deleteCollection(c echo.Context) error {
	id, err := pathID(c, "collection")
	if err != nil {
		return err
	}
	if err := h.store.DeleteCollection(withoutCancel(c), id); err != nil {
		return err
	}
	return redirectFlash(c, "Collection deleted.", "/collections")
}
