from pywebbench.cli import main

raise SystemExit(main())
