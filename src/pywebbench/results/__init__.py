"""Results: the value types of a run and the schema-versioned file that holds them."""
