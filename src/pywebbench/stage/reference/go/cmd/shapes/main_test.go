package main

import (
	"net/http/httptest"
	"testing"
)

func TestSummarizeGivesTheSpectrumOfTheSamples(t *testing.T) {
	ms := make([]float64, 0, 1000)
	for i := 1000; i >= 1; i-- {
		ms = append(ms, float64(i))
	}
	got := summarize(ms)
	if got.Max != 1000 || got.Mean != 500.5 || len(got.Percentiles) != len(spectrum) {
		t.Fatalf("max %v mean %v points %d", got.Max, got.Mean, len(got.Percentiles))
	}
	want := map[float64]float64{0: 1, 50: 500, 99: 990, 100: 1000}
	for _, point := range got.Percentiles {
		if v, ok := want[point[0]]; ok && point[1] != v {
			t.Errorf("p%v = %v, want %v", point[0], point[1], v)
		}
	}
	if empty := summarize(nil); len(empty.Percentiles) != 0 || empty.Max != 0 {
		t.Errorf("no samples: %+v", empty)
	}
}

func TestEventParamsHaveDefaultsAndABound(t *testing.T) {
	for query, want := range map[string][2]float64{
		"":                   {3, 1000},
		"n=5&rate=20":        {5, 20},
		"n=-1&rate=0":        {3, 1000},
		"n=999999999&rate=x": {maxEvents, 1000},
	} {
		n, rate := eventParams(httptest.NewRequest("GET", "/sse?"+query, nil))
		if float64(n) != want[0] || rate != want[1] {
			t.Errorf("%q: n %d rate %v, want %v", query, n, rate, want)
		}
	}
}

func TestTheFileLimitIsAtLeastWhatItWas(t *testing.T) {
	before := raiseNofile(0)
	if after := raiseNofile(before + 1); after < before {
		t.Fatalf("limit fell from %d to %d", before, after)
	}
}
