package main

import "testing"

// Expected: sum of a Python bytearray sieve, i.e. the number of primes p < n.
func TestCountPrimesMatchesPython(t *testing.T) {
	cases := [][2]int{
		{0, 0}, {1, 0}, {2, 0}, {3, 1}, {4, 2}, {5, 2}, {10, 4}, {100, 25}, {1000, 168},
		{100000, 9592}, {1000003, 78498},
	}
	for _, c := range cases {
		if got := CountPrimes(c[0]); got != c[1] {
			t.Errorf("CountPrimes(%d) = %d, want %d", c[0], got, c[1])
		}
	}
}
