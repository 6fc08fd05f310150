from phase24.cli import main

raise SystemExit(main())
