"""One module per command of the CLI (cli.py parses and dispatches): `run`/`sweep` (run.py),
`calibrate` (calibrate.py, its sizing run in sizing.py), `compare`/`report`/`history`
(results.py), `list`/`doctor` (setup.py); `app` is commands/app.py. What they share in reading
options is common.py."""
