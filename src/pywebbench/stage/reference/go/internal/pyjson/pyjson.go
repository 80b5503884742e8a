// Package pyjson appends JSON text byte-identical to Python's json.dumps with its
// defaults (ensure_ascii=True, separators ", " and ": ").
package pyjson

import (
	"strconv"
	"unicode/utf8"
)

const hexdigits = "0123456789abcdef"

// String appends s as a JSON string literal the way Python's json.dumps escapes it:
// backslash and quote escaped, \b \f \n \r \t short forms, every other code point
// outside ' '..'~' (including DEL) as \uXXXX in lowercase hex, astral code points as a
// surrogate pair. Invalid UTF-8 bytes become U+FFFD.
func String(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c <= 0x7e && c != '"' && c != '\\' {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		size := 1
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			if r > 0xffff {
				v := r - 0x10000
				dst = unicodeEscape(dst, 0xd800|((v>>10)&0x3ff))
				dst = unicodeEscape(dst, 0xdc00|(v&0x3ff))
			} else {
				dst = unicodeEscape(dst, r)
			}
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func unicodeEscape(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u',
		hexdigits[(r>>12)&0xf], hexdigits[(r>>8)&0xf], hexdigits[(r>>4)&0xf], hexdigits[r&0xf])
}

// Int appends a decimal integer, as Python prints an int.
func Int(dst []byte, n int64) []byte {
	return strconv.AppendInt(dst, n, 10)
}
