package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"tribunal/store"
	"tribunal/views"
)

func (h *Handler) showProviders(c echo.Context) error {
	return h.renderProviders(c, http.StatusOK, views.ProviderForm{Input: store.ProviderInput{Type: store.ProviderOllama}})
}

func (h *Handler) renderProviders(c echo.Context, status int, form views.ProviderForm) error {
	ps, err := h.store.Providers(c.Request().Context())
	if err != nil {
		return err
	}
	return render(c, status, views.ProvidersPage(ps, form))
}

func providerForm(c echo.Context) (store.ProviderInput, error) {
	in := store.ProviderInput{
		Name: c.FormValue("name"), Type: store.ProviderType(c.FormValue("type")), BaseURL: c.FormValue("base_url"),
		ModelsEndpoint: c.FormValue("models_endpoint"), InferenceEndpoint: c.FormValue("inference_endpoint"),
	}
	var err error
	if in.Concurrency, err = formInt(c, "concurrency"); err != nil {
		return in, err
	}
	if in.RequestsPerMinute, err = formInt(c, "requests_per_minute"); err != nil {
		return in, err
	}
	if in.TimeoutSeconds, err = formInt(c, "timeout_seconds"); err != nil {
		return in, err
	}
	if in.ConnectTimeoutSeconds, err = formInt(c, "connect_timeout_seconds"); err != nil {
		return in, err
	}
	form, err := c.FormParams()
	if err != nil {
		return in, badRequest("unreadable form: %v", err)
	}
	in.Headers = formHeaders(form, "")
	if c.FormValue("prices_present") != "" {
		if in.Prices, err = parsePrices(c.FormValue("prices")); err != nil {
			return in, err
		}
	}
	return in, nil
}

// formHeaders reads the header rows named prefix+"header_key", …_value
// and …_secret (views.PrefixedHeaderRow); a row without a name is one the
// user added and left.
func formHeaders(form url.Values, prefix string) []store.Header {
	keys, values, secrets := form[prefix+"header_key"], form[prefix+"header_value"], form[prefix+"header_secret"]
	hs := []store.Header{}
	for i, k := range keys {
		if strings.TrimSpace(k) == "" {
			continue
		}
		hd := store.Header{Key: k}
		if i < len(values) {
			hd.Value = values[i]
		}
		hd.IsSecret = i >= len(secrets) || secrets[i] != "plain"
		hs = append(hs, hd)
	}
	return hs
}

// parsePrices reads "model, input, output" lines (USD per million tokens).
func parsePrices(text string) ([]store.ProviderPrice, error) {
	out := []store.ProviderPrice{}
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		// The model name may itself hold commas; the last two fields are the prices.
		parts := strings.Split(line, ",")
		if len(parts) < 3 {
			return out, &store.ValidationError{Field: "prices", Message: fmt.Sprintf("line %d: write model, input price, output price", n+1)}
		}
		k := len(parts)
		in, err1 := strconv.ParseFloat(strings.TrimSpace(parts[k-2]), 64)
		o, err2 := strconv.ParseFloat(strings.TrimSpace(parts[k-1]), 64)
		if err1 != nil || err2 != nil {
			return out, &store.ValidationError{Field: "prices", Message: fmt.Sprintf("line %d: the prices must be numbers", n+1)}
		}
		out = append(out, store.ProviderPrice{Model: strings.TrimSpace(strings.Join(parts[:k-2], ",")), InputPerMTok: in, OutputPerMTok: o})
	}
	return out, nil
}

func (h *Handler) createProvider(c echo.Context) error {
	in, err := providerForm(c)
	if err == nil {
		_, err = h.store.CreateProvider(withoutCancel(c), in)
	}
	if err != nil {
		if status, msg, ok := formProblem(err); ok {
			return h.renderProviders(c, status, views.ProviderForm{Input: in, Error: msg})
		}
		return err
	}
	return redirectFlash(c, "Provider created.", "/providers")
}

func (h *Handler) editProvider(c echo.Context) error {
	id, err := pathID(c, "provider")
	if err != nil {
		return err
	}
	p, err := h.store.Provider(c.Request().Context(), id)
	if err != nil {
		return err
	}
	in := store.ProviderInput{Name: p.Name, Type: p.Type, BaseURL: p.BaseURL, ModelsEndpoint: p.ModelsEndpoint, Prices: p.Prices,
		InferenceEndpoint: p.InferenceEndpoint, Concurrency: p.Concurrency, RequestsPerMinute: p.RequestsPerMinute,
		TimeoutSeconds: p.TimeoutSeconds, ConnectTimeoutSeconds: p.ConnectTimeoutSeconds, Headers: p.Headers}
	return render(c, http.StatusOK, views.ProviderEditPage(views.ProviderForm{ID: id, Input: in}))
}

func (h *Handler) updateProvider(c echo.Context) error {
	id, err := pathID(c, "provider")
	if err != nil {
		return err
	}
	in, err := providerForm(c)
	if err == nil {
		_, err = h.store.UpdateProvider(withoutCancel(c), id, in)
	}
	if err != nil {
		if status, msg, ok := formProblem(err); ok {
			return render(c, status, views.ProviderEditPage(views.ProviderForm{ID: id, Input: in, Error: msg}))
		}
		return err
	}
	h.engine.Refresh() // running calls see the new settings now
	return redirectFlash(c, "Provider saved.", "/providers")
}

func (h *Handler) deleteProvider(c echo.Context) error {
	id, err := pathID(c, "provider")
	if err != nil {
		return err
	}
	if err := h.store.DeleteProvider(withoutCancel(c), id); err != nil {
		return err
	}
	return redirectFlash(c, "Provider deleted.", "/providers")
}

func (h *Handler) providerHeaderRow(c echo.Context) error {
	return render(c, http.StatusOK, views.HeaderRow(store.Header{IsSecret: true}))
}

func (h *Handler) testProviderPage(c echo.Context) error {
	id, err := pathID(c, "provider")
	if err != nil {
		return err
	}
	res, err := h.testProvider(c, id)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, views.ProviderTestResult(views.ProviderTest{OK: res.OK, Message: res.Message,
		LatencyMs: res.LatencyMs, Models: res.Models, ContextLengths: res.ContextLengths, Hint: connectionHint(res)}))
}

// connectionHints turn the usual ways a connection test fails into what to
// check; the first whose marker the message holds wins.
var connectionHints = []struct{ marker, hint string }{
	{"connection refused", "Nothing answers at this address and port: is the server running, and listening there?"},
	{"no such host", "The host name does not resolve: check the base URL."},
	{"HTTP 401", "The provider refused the credentials: check the Authorization header (Bearer and the key)."},
	{"HTTP 403", "The provider refused the credentials: check the Authorization header (Bearer and the key)."},
	{"HTTP 404", "The server answers, but not at this path: check the models endpoint (usually /v1/models)."},
	{"no answer within", "The server took too long: check the address, or raise the timeout."},
	{"not valid JSON", "The server answers, but not as an OpenAI-compatible API: check the base URL and the models endpoint."},
	{"did not answer an OpenAI-style", "The server answers, but not as an OpenAI-compatible API: check the base URL and the models endpoint."},
}

// connectionHint says what to check after a failed connection test.
func connectionHint(res *ConnectionTest) string {
	if res.OK {
		return ""
	}
	for _, h := range connectionHints {
		if strings.Contains(res.Message, h.marker) {
			return h.hint
		}
	}
	return "Check the base URL, the models endpoint and the headers (an API key goes in Authorization: Bearer …)."
}

// providerModels lists a provider's model ids.
func (h *Handler) providerModels(c echo.Context, id int64) ([]modelJSON, error) {
	p, err := h.store.ProviderWithSecrets(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	models, err := h.engine.Client(p).Models(c.Request().Context())
	if err != nil {
		return nil, err
	}
	out := make([]modelJSON, len(models))
	var published []store.ProviderPrice
	for i, m := range models {
		out[i] = modelJSON{ID: m.ID, OwnedBy: m.OwnedBy, ContextLength: m.ContextLength}
		if in, o, ok := m.Pricing.PerMTok(); ok {
			published = append(published, store.ProviderPrice{Model: m.ID, InputPerMTok: in, OutputPerMTok: o})
		}
	}
	// OpenRouter publishes prices with its models: keep them for cost tracking,
	// and read the provider's prices again with them merged in.
	if p.Type == store.ProviderOpenRouter && len(published) > 0 {
		if err := h.store.MergePublishedPrices(withoutCancel(c), p.ID, published); err != nil {
			return nil, err
		}
		if p, err = h.store.Provider(c.Request().Context(), p.ID); err != nil {
			return nil, err
		}
	}
	prices := map[string]store.ProviderPrice{}
	for _, pr := range p.Prices {
		prices[pr.Model] = pr
	}
	for i := range out {
		if pr, ok := prices[out[i].ID]; ok {
			out[i].InputPerMTok, out[i].OutputPerMTok = &pr.InputPerMTok, &pr.OutputPerMTok
		}
	}
	return out, nil
}

type modelJSON struct {
	ID            string   `json:"id"`
	OwnedBy       string   `json:"owned_by,omitempty"`
	InputPerMTok  *float64 `json:"input_per_mtok,omitempty"`
	OutputPerMTok *float64 `json:"output_per_mtok,omitempty"`
	// ContextLength is the context window in tokens, where the provider reports it.
	ContextLength int64 `json:"context_length,omitempty"`
}

// modelOptions feeds a model picker's datalist; a provider that cannot list
// its models still leaves the field open for typing.
func (h *Handler) modelOptions(c echo.Context) error {
	list := c.QueryParam("list")
	if list == "" {
		list = "models"
	}
	// The picker's select sends its own value, named judge_ or target_provider_id.
	var id int64
	var err error
	for _, k := range []string{"judge_provider_id", "target_provider_id", "provider_id"} {
		if v := c.QueryParam(k); v != "" {
			id, err = strconv.ParseInt(v, 10, 64)
			break
		}
	}
	if err != nil || id <= 0 {
		return c.NoContent(http.StatusOK) // no provider chosen yet: nothing to list
	}
	models, err := h.providerModels(c, id)
	ids := make([]string, len(models))
	for i, m := range models {
		ids[i] = m.ID
	}
	msg := ""
	if err != nil {
		if _, m := statusOf(err); m != "internal error" {
			msg = m
		} else {
			return err
		}
	}
	return render(c, http.StatusOK, views.ModelOptions(list, ids, msg))
}
