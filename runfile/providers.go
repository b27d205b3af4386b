// Package runfile reads and validates run files: YAML that describes a whole
// benchmark (providers, tasks, targets, judges, checks, metrics and gates)
// for `tribunal run`. Validation reports every problem at once, each with
// its line, and never talks to a database or a provider: names of stored
// providers, judges, styles and collections are resolved when the run starts.
//
// Secrets never sit in a run file: header values are ${ENV_VAR} references
// (with an optional ${VAR:-default}); a literal value in a secret-looking
// header (Authorization, *key*, *token*, *secret*, *password*, Cookie) is a
// problem, and so is a reference to a variable that is not set.
package runfile

import (
	"fmt"
	"regexp"
	"strings"

	"tribunal/secret"
	"tribunal/store"
)

func (p *reader) providers(n *node) {
	seen := map[string]int{}
	for i, it := range p.items(n, "providers") {
		field := fmt.Sprintf("providers[%d]", i)
		if !p.mapping(it, field) {
			continue
		}
		p.keys(it, field, providerKeys...)
		pr := Provider{Line: it.line, Name: p.expand(it.get("name"), field+".name")}
		if pr.Name == "" {
			p.errf(it.line, field+".name", "is required")
			continue
		}
		field = fmt.Sprintf("providers[%q]", pr.Name)
		if prev, dup := seen[strings.ToLower(pr.Name)]; dup {
			p.errf(it.line, field, "is defined twice (first at line %d)", prev)
			continue
		}
		seen[strings.ToLower(pr.Name)] = it.line
		pr.RefOnly = len(it.keys) == 1
		if pr.RefOnly {
			p.f.Providers = append(p.f.Providers, pr)
			continue
		}
		in := store.ProviderInput{Name: pr.Name,
			Type:              providerType(p.str(it.get("type"), field+".type")),
			BaseURL:           p.expand(it.get("base_url"), field+".base_url"),
			ModelsEndpoint:    p.expand(it.get("models_endpoint"), field+".models_endpoint"),
			InferenceEndpoint: p.expand(it.get("inference_endpoint"), field+".inference_endpoint")}
		if in.BaseURL == "" && it.get("base_url").isNull() {
			p.errf(it.line, field+".base_url", "is required (or give only the name to use a stored provider as it is)")
		}
		for _, k := range []struct {
			key string
			dst *int
		}{{"concurrency", &in.Concurrency}, {"requests_per_minute", &in.RequestsPerMinute},
			{"timeout_seconds", &in.TimeoutSeconds}, {"connect_timeout_seconds", &in.ConnectTimeoutSeconds}} {
			if v, ok := p.integer(it.get(k.key), field+"."+k.key); ok {
				*k.dst = v
			}
		}
		in.Headers, pr.Secrets = p.headers(it.get("headers"), field+".headers")
		in.Prices = p.prices(it.get("prices"), field+".prices")
		// The store's own checks, with the line of the field they name.
		check := in
		check.Headers = append([]store.Header(nil), in.Headers...)
		check.Prices = append([]store.ProviderPrice(nil), in.Prices...)
		if err := check.Normalize(); err != nil {
			line := it.line
			if ve, ok := err.(*store.ValidationError); ok {
				key := ve.Field
				if j := strings.IndexAny(key, ".["); j >= 0 {
					key = key[:j]
				}
				if v := it.get(key); v != nil && v.line > 0 {
					line = v.line
				}
				p.errf(line, field+"."+ve.Field, "%s", ve.Message)
			} else {
				p.errf(line, field, "%v", err)
			}
		}
		pr.Input = in
		p.f.Providers = append(p.f.Providers, pr)
	}
}

// providerType reads a provider type loosely: "openrouter", "lm-studio",
// "custom" and the API's names (OPENAI, OLLAMA, …) all work.
func providerType(s string) store.ProviderType {
	switch k := looseKey(s); k {
	case "":
		return ""
	case "lmstudio":
		return store.ProviderLMStudio
	case "custom", "openaicompatible", "customopenaicompatible":
		return store.ProviderCustom
	default:
		for _, t := range store.ProviderTypes {
			if looseKey(string(t)) == k {
				return t
			}
		}
	}
	return store.ProviderType(strings.ToUpper(s))
}

// secretHeader reports whether a header usually carries a credential: those
// that always do (secret.CredentialHeader) and any that looks like one.
func secretHeader(key string) bool {
	k := strings.ToLower(key)
	return secret.CredentialHeader(k) || strings.Contains(k, "authorization") || strings.Contains(k, "key") ||
		strings.Contains(k, "token") || strings.Contains(k, "secret") || strings.Contains(k, "password")
}

func (p *reader) headers(n *node, field string) ([]store.Header, []string) {
	type raw struct {
		key    string
		val    *node
		secret *bool
		line   int
	}
	var hs []raw
	switch {
	case n.isNull():
		return nil, nil
	case n.kind == object:
		for i, k := range n.keys {
			hs = append(hs, raw{key: k, val: n.vals[i], line: n.klns[i]})
		}
	case n.kind == list:
		for i, it := range n.items {
			f := fmt.Sprintf("%s[%d]", field, i)
			if !p.mapping(it, f) {
				continue
			}
			p.keys(it, f, "key", "value", "secret")
			r := raw{key: p.str(it.get("key"), f+".key"), val: it.get("value"), line: it.line}
			if s := it.get("secret"); s != nil {
				b := strings.EqualFold(p.str(s, f+".secret"), "true")
				r.secret = &b
			}
			hs = append(hs, r)
		}
	default:
		p.errf(n.line, field, "must be a mapping (Header: value) or a list of {key, value}, not %s", n.describe())
		return nil, nil
	}
	var out []store.Header
	var secrets []string
	for _, h := range hs {
		f := field + "." + h.key
		if h.val.isNull() || h.val.kind != scalar {
			p.errf(h.line, f, "needs a text value")
			continue
		}
		rawVal := strings.ReplaceAll(h.val.text, "$${", "") // escaped: not references
		refs := envRefs.FindAllStringSubmatch(rawVal, -1)
		secretish := secretHeader(h.key) || (h.secret != nil && *h.secret)
		if secretish && len(refs) == 0 && !strings.Contains(rawVal, "${") {
			p.errf(h.val.line, f, "a secret header takes its value from the environment: write \"${%s}\" instead of the literal value (never commit secrets)",
				envName(h.key))
			continue
		}
		val := p.expand(h.val, f)
		isSecret := secretish || len(refs) > 0
		if h.secret != nil && !*h.secret && secretish {
			isSecret = true // a credential is always stored encrypted
		}
		if isSecret {
			secrets = append(secrets, h.key)
		}
		out = append(out, store.Header{Key: h.key, Value: val, IsSecret: isSecret})
	}
	return out, secrets
}

// envName suggests a variable name for a header: Authorization → API_KEY.
func envName(header string) string {
	if strings.EqualFold(header, "authorization") {
		return "API_KEY"
	}
	return strings.ToUpper(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(header, "_"))
}

func (p *reader) prices(n *node, field string) []store.ProviderPrice {
	if n.isNull() {
		return nil
	}
	out := []store.ProviderPrice{}
	read := func(model string, v *node, f string) {
		if !p.mapping(v, f) {
			return
		}
		p.keys(v, f, "model", "input", "output", "input_per_mtok", "output_per_mtok")
		pr := store.ProviderPrice{Model: model}
		in, ok1 := p.num(cmpNode(v.get("input_per_mtok"), v.get("input")), f+".input_per_mtok")
		o, ok2 := p.num(cmpNode(v.get("output_per_mtok"), v.get("output")), f+".output_per_mtok")
		if !ok1 || !ok2 {
			p.errf(v.line, f, "needs input and output prices in USD per million tokens")
			return
		}
		pr.InputPerMTok, pr.OutputPerMTok = in, o
		out = append(out, pr)
	}
	switch n.kind {
	case object:
		for i, k := range n.keys {
			read(k, n.vals[i], field+"."+k)
		}
	case list:
		for i, it := range n.items {
			f := fmt.Sprintf("%s[%d]", field, i)
			m := p.str(it.get("model"), f+".model")
			if m == "" {
				p.errf(it.line, f+".model", "is required")
				continue
			}
			read(m, it, f)
		}
	default:
		p.errf(n.line, field, "must be a mapping of model: {input, output} (USD per million tokens)")
	}
	return out
}

func cmpNode(a, b *node) *node {
	if a != nil {
		return a
	}
	return b
}

// ---- tasks ----
