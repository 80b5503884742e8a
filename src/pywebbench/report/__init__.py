"""Pure renderers: a ResultSet in, text out. No service runs to build any report."""
