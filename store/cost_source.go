package store

// CostSource says where a cost came from. A provider's reported cost
// (OpenRouter's usage.cost) is preferred over the price table: it is what
// the call was billed, discounts, caching and routing included.
type CostSource string

// Cost sources.
const (
	// CostUnknown: no cost, a cost imported with the answer, or a sum with
	// a part of unknown cost.
	CostUnknown    CostSource = ""
	CostProvider   CostSource = "provider"
	CostPriceTable CostSource = "price_table"
	// CostMixed: a sum of calls some of which the provider reported and
	// some of which were priced from the table.
	CostMixed CostSource = "mixed"
)

// Merge is the source of the sum of a cost from a and one from b.
func (a CostSource) Merge(b CostSource) CostSource {
	switch {
	case a == b:
		return a
	case a == CostUnknown || b == CostUnknown:
		return CostUnknown
	}
	return CostMixed
}

// CallCost is one call's cost and its source: what the provider reported
// when it reported it, else the price table's figure for the tokens, else
// unknown (nil).
func (p Price) CallCost(reported *float64, promptTokens, completionTokens int64) (*float64, CostSource) {
	if reported != nil {
		return reported, CostProvider
	}
	if c := p.Cost(promptTokens, completionTokens); c != nil {
		return c, CostPriceTable
	}
	return nil, CostUnknown
}

// CostSum adds up the costs of several calls (a conversation's turns, an
// agent's tool loop) with their source: unknown as soon as one call's
// cost is.
type CostSum struct {
	USD    *float64
	Source CostSource
	calls  int
}

// Add counts one call's cost.
func (s *CostSum) Add(usd *float64, src CostSource) {
	s.calls++
	if s.calls == 1 {
		s.USD, s.Source = usd, src
		return
	}
	s.Source = s.Source.Merge(src)
	if s.USD == nil || usd == nil {
		s.USD, s.Source = nil, CostUnknown
		return
	}
	sum := *s.USD + *usd
	s.USD = &sum
}
