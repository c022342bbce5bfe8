"""`python -m svcx_client` is the `svcx` command."""

from svcx_client.cli import main

raise SystemExit(main())
