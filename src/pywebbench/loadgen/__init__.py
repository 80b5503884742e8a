"""Native load generators behind one interface."""
