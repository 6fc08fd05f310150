"""`python -m phase24.minigpt minigpt ...` until the package CLI is wired (same arguments)."""

from .cli import main

raise SystemExit(main())
