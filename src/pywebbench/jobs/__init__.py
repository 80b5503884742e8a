"""A whole job: its pre-flight, the run (plan, services, runner, resume), the tuning engine, shards,
and a run as the terminal shows it."""
