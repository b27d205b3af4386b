package mcpclient

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"npx -y @modelcontextprotocol/server-filesystem /tmp", []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"}},
		{"  uvx  mcp-server-fetch\t--ignore-robots ", []string{"uvx", "mcp-server-fetch", "--ignore-robots"}},
		{`server --root '/my docs' --name "it's \"here\""`, []string{"server", "--root", "/my docs", "--name", `it's "here"`}},
		{`a\ b 'c\d' "e\f" ''`, []string{"a b", `c\d`, `e\f`, ""}},
		{`echo $HOME;rm -rf / *`, []string{"echo", "$HOME;rm", "-rf", "/", "*"}},
	} {
		got, err := splitCommand(tc.line)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("splitCommand(%q) = %q, %v; want %q", tc.line, got, err, tc.want)
		}
	}
	for _, line := range []string{"", "   ", `server 'open`, `server "open`, `server \`} {
		if got, err := splitCommand(line); err == nil {
			t.Errorf("splitCommand(%q) = %q, want an error", line, got)
		}
	}
}

func TestTruncate(t *testing.T) {
	if got, cut := truncate("short", 5); got != "short" || cut {
		t.Errorf("truncate at the length = %q, %v", got, cut)
	}
	got, cut := truncate("aé", 2) // the cut would fall inside "é"
	if !cut || !strings.HasPrefix(got, "a\n[truncated: 3 bytes, 1 kept]") {
		t.Errorf("truncate inside a character = %q, %v", got, cut)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 16384: "16,384", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
