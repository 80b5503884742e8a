"""The vocabulary every stage speaks: one-line user errors, child processes in their own process
groups, and the record of a run's groups for the guard and the next run's sweep."""
