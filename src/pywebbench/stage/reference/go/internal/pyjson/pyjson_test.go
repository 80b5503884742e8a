package pyjson

import "testing"

// Expected values printed by CPython's json.dumps(input).
func TestStringMatchesPython(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", `""`},
		{"abcdefghijklmnopqrst", `"abcdefghijklmnopqrst"`},
		{"q\"uo\\te", `"q\"uo\\te"`},
		{"\b\f\n\r\t\u0000\u001f\u007f", `"\b\f\n\r\t\u0000\u001f\u007f"`},
		{"caf\u00e9 \u20ac", `"caf\u00e9 \u20ac"`},
		{"\U0001F600x", `"\ud83d\ude00x"`},
		{"tilde~ space", `"tilde~ space"`},
		{"\u2028", `"\u2028"`},
	}
	for _, c := range cases {
		if got := string(String(nil, c.in)); got != c.want {
			t.Errorf("String(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestInt(t *testing.T) {
	if got := string(Int([]byte("x"), -42)); got != "x-42" {
		t.Fatal(got)
	}
}
