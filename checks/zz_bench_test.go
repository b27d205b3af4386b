package checks_test
import ("strings";"testing";"time";"tribunal/checks")
func TestTiming(t *testing.T){
  inputs := map[string]string{
   "words": strings.Repeat("word, 12.5 x-1 ", 1<<20/15),
   "nospace": strings.Repeat("a", 1<<20),
   "digits": strings.Repeat("1,234 ", 1<<20/6),
   "braces": strings.Repeat("{", 1<<20),
   "boxed": strings.Repeat(`\boxed{`, 1<<20/7),
   "answer": strings.Repeat(`answer is `, 1<<20/10),
  }
  for name, in := range inputs {
    for _, typ := range checks.Types {
      ref := "a b c 1"
      if typ == checks.JSONSchema { ref = `{"type":"object"}` }
      st := time.Now()
      checks.Run(typ, in, ref)
      d := time.Since(st)
      if d > 50*time.Millisecond { t.Logf("%s %s %v", name, typ, d) }
    }
  }
}
