package secret

import (
	"bytes"
	"testing"
)

// TestMAC: boxes on one master key agree on a value's MAC; another master
// key, or another value, gives another.
func TestMAC(t *testing.T) {
	box := func(key string) *Box {
		b, err := NewBox(key)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, again, other := box("master-one"), box("master-one"), box("master-two")
	mac := a.MAC("tribunal-session\x00token")
	if len(mac) != 32 || !bytes.Equal(mac, again.MAC("tribunal-session\x00token")) {
		t.Fatalf("two boxes on one master key disagree: %x", mac)
	}
	if bytes.Equal(mac, other.MAC("tribunal-session\x00token")) {
		t.Error("another master key gives the same MAC")
	}
	if bytes.Equal(mac, a.MAC("tribunal-session\x00token2")) {
		t.Error("another value gives the same MAC")
	}
	sealed, err := a.Seal("x")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := again.Open(sealed); err != nil || got != "x" {
		t.Errorf("Open(Seal(x)) = %q, %v", got, err)
	}
}
